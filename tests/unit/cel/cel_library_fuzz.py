"""Random library-call expressions (quantity, semver, strings, lists, regex, URL, IP/CIDR) with
random literals, for differential tests against the upstream oracle."""

from __future__ import annotations

import random


def library_expressions(seed: int, n: int) -> list[str]:
    rnd = random.Random(seed)
    Q = [
        "1",
        "1.0",
        "0.5Gi",
        "1Gi",
        "1024Mi",
        "100m",
        "1e3",
        "1E",
        "9223372036854775807",
        "1.5k",
        "-2",
        "0",
        "12345678901234567890",
        "1n",
        "0.1n",
        "8Ei",
        "7.5Ei",
        "123.456789m",
        "1Ki",
        "0.001",
        "1e-3",
        "5e-10",
        "+3",
        "-0.5",
        "24GB",
        "",
        "1..0",
        "e3",
        "1.G",
        "Mi",
        "10Mi",
        "1000000000000000000",
    ]
    S = [
        "1.0.0",
        "1.2.3-rc.1",
        "1.2.3-rc.1+b",
        "v1.2",
        "01.2.3",
        "1.2",
        "1",
        "1.2.3.4",
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-0.3.7",
        "1.0.0-x.7.z.92",
        "2.0.0",
        "10.0.0",
        "1.10.0",
        "1.0.0+20130313144700",
        "1.0.0-beta+exp.sha.5114f85",
        "v01.02.03",
        "1.2.3-01",
        "1.2.03",
        "",
    ]
    STR = [
        '"abc"',
        '"a,b,,c"',
        '"héllo wörld"',
        '""',
        '"aaa"',
        '"ABC def"',
        '" x "',
        '"日本語"',
        '"a.b.c"',
        '"x1y22z333"',
    ]
    RE = [
        '"[0-9]+"',
        '"a+"',
        '"^a"',
        '"(a)(b)"',
        '"é"',
        '"\\\\w+"',
        '"[[:alpha:]]+"',
        '"(?i)abc"',
        '"."',
        '"$"',
        '"b*"',
    ]
    URLV2 = ['"/a%2Fb"', "2", "1", '"/%C3%A4"', '"a.b:1"', '"fe80::1%eth0"', '"8"', '"/A%zz"']
    URLV = ['"a.b:8"', '"::1"', '"80"', '"/p"', '"h.com"', '"/p%20q"', '"[::1]:80"', '"https"', '"/c"', '"a.b"', '"8"']
    CIDRM = [
        "prefixLength() == 8",
        'containsIP("10.1.1.1")',
        'containsCIDR("10.1.0.0/16")',
        'masked() == cidr("10.0.0.0/8")',
        'ip() == ip("10.1.2.3")',
        "family() == 6",
    ]
    INT = ["0", "1", "2", "-1", "3", "10"]
    LST = [
        "[1, 2, 3]",
        "[3, 1, 2]",
        "[1.5, 2.5]",
        '["b", "a"]',
        "[]",
        "[1, 1, 2]",
        "[[1], [2, 3]]",
        "[true, false]",
        "[2u, 1u]",
    ]

    def q():
        return f'quantity("{rnd.choice(Q)}")'

    def sv():
        return f'semver("{rnd.choice(S)}")'

    templates = [
        lambda: f"{q()}.compareTo({q()}) == {rnd.choice(['-1', '0', '1'])}",
        lambda: f"{q()}.isInteger()",
        lambda: f"{q()}.asInteger() == {rnd.choice(['0', '1', '1000', '-2'])}",
        lambda: (
            f"{q()}.asApproximateFloat() {rnd.choice(['<', '>', '=='])} {rnd.choice(['0.001', '1.0', '1000.0', '1.0e18'])}"
        ),
        lambda: f"{q()}.add({q()}).isInteger()",
        lambda: f"{q()}.add({rnd.choice(INT)}).compareTo({q()}) == 0",
        lambda: f"{q()}.sub({q()}).isLessThan({q()})",
        lambda: f"{q()}.sub({q()}).asApproximateFloat() > 0.0",
        lambda: f"{q()} == {q()}",
        lambda: f"sign({q()}) == {rnd.choice(['-1', '0', '1'])}",
        lambda: f'isQuantity("{rnd.choice(Q)}")',
        lambda: f"{q()}.isGreaterThan({q()})",
        lambda: f"{sv()}.compareTo({sv()}) == {rnd.choice(['-1', '0', '1'])}",
        lambda: f"{sv()} == {sv()}",
        lambda: f'isSemver("{rnd.choice(S)}")',
        lambda: f'isSemver("{rnd.choice(S)}", true)',
        lambda: f'semver("{rnd.choice(S)}", true).major() == 1',
        lambda: f'semver("{rnd.choice(S)}", true).isLessThan({sv()})',
        lambda: f"{rnd.choice(STR)}.indexOf({rnd.choice(STR)}) == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(STR)}.lastIndexOf({rnd.choice(STR)}) == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(STR)}.indexOf({rnd.choice(STR)}, {rnd.choice(INT)}) == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(STR)}.substring({rnd.choice(INT)}) == {rnd.choice(STR)}",
        lambda: f"{rnd.choice(STR)}.charAt({rnd.choice(INT)}) == {rnd.choice(STR)}",
        lambda: f"{rnd.choice(STR)}.split({rnd.choice(STR)}).size() == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(STR)}.replace({rnd.choice(STR)}, {rnd.choice(STR)}).size() == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(STR)}.upperAscii() == {rnd.choice(STR)}.upperAscii()",
        lambda: f"{rnd.choice(STR)}.trim() == {rnd.choice(STR)}",
        lambda: f"{rnd.choice(STR)}.find({rnd.choice(RE)}) == {rnd.choice(STR)}",
        lambda: f"{rnd.choice(STR)}.findAll({rnd.choice(RE)}).size() == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(STR)}.findAll({rnd.choice(RE)}, {rnd.choice(INT)}).size() == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(STR)}.matches({rnd.choice(RE)})",
        lambda: f"{rnd.choice(LST)}.sum() == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(LST)}.min() == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(LST)}.max() == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(LST)}.isSorted()",
        lambda: f"{rnd.choice(LST)}.indexOf({rnd.choice(INT)}) == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(LST)}.distinct().size() == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(LST)}.sort().size() == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(LST)}.slice({rnd.choice(INT)}, {rnd.choice(INT)}).size() == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(LST)}.reverse().size() == {rnd.choice(INT)}",
        lambda: f"{rnd.choice(LST)}.flatten().size() == {rnd.choice(INT)}",
        lambda: f"lists.range({rnd.choice(INT)}).size() == {rnd.choice(INT)}",
        lambda: (
            f'isURL("{rnd.choice(["https://a.b/c", "/x", "x", "http://[::1]:80/p?q=1", "ftp://u@h/p", "https://a b", "https://a.b/%zz", "https://a.b:x/", "h://[::1", "https://a.b/p#f", "*", "mailto:x@y", "https://a%41.b/", "https://a.b/%41"])}")'
        ),
        lambda: (
            f'url("{rnd.choice(["https://a.b/%41%zz", "https://a.b/a%2Fb", "https://a.b/ä?x=%20&y=a+b", "https://u:p@a.b:1/p?a=1&a=2&;b", "http://[fe80::1%25eth0]:8/"])}").{rnd.choice(["getHost()", "getHostname()", "getPort()", "getEscapedPath()", "getScheme()", "getQuery().size()"])} == {rnd.choice(URLV2)}'
        ),
        lambda: (
            f'url("{rnd.choice(["https://a.b:8/c?x=1", "http://[::1]:80/p?q=1&q=2", "https://user@h.com/p%20q"])}").{rnd.choice(["getHost()", "getHostname()", "getPort()", "getEscapedPath()", "getScheme()"])} == {rnd.choice(STR + URLV)}'
        ),
        lambda: (
            f'isIP("{rnd.choice(["1.2.3.4", "::1", "1.2.3", "01.2.3.4", "::ffff:1.2.3.4", "fe80::1%eth0", "2001:db8::1"])}")'
        ),
        lambda: (
            f'ip("{rnd.choice(["1.2.3.4", "::1", "2001:db8::1", "169.254.1.1", "224.0.0.1", "255.255.255.255", "0.0.0.0", "ff02::1"])}").{rnd.choice(["family() == 4", "isLoopback()", "isGlobalUnicast()", "isLinkLocalUnicast()", "isLinkLocalMulticast()", "isUnspecified()"])}'
        ),
        lambda: (
            f'cidr("{rnd.choice(["10.0.0.0/8", "10.1.2.3/8", "::/0", "2001:db8::/32", "1.2.3.4/33", "1.2.3.4"])}").{rnd.choice(CIDRM)}'
        ),
        lambda: f'ip.isCanonical("{rnd.choice(["1.2.3.4", "2001:db8::1", "2001:DB8::1", "2001:db8:0::1"])}")',
        lambda: f'isCIDR("{rnd.choice(["10.0.0.0/8", "10.1.2.3/8", "1.2.3.4/33", "::1/128", "1.2.3.4"])}")',
    ]
    return list(dict.fromkeys(rnd.choice(templates)() for _ in range(n)))
