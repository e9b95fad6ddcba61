"""The DRA CEL conformance table (shared by test_conformance and test_oracle_agreement)."""

from __future__ import annotations

GPU = {
    "driver": "gpu.example.com",
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "H100"},
        "gpu.example.com/index": {"int": 0},
        "driverVersion": {"version": "550.54.15"},
        "dra.example.com/healthy": {"bool": True},
        "x": {"bool": True},
    },
    "capacity": {"memory": {"value": "24Gi"}},
    "allowMultipleAllocations": False,
}
GPU8 = {**GPU, "capacity": {"memory": {"value": "8Gi"}}}
GPU_OLD = {**GPU, "attributes": {**GPU["attributes"], "driverVersion": {"version": "535.104.5"}}}
LISTS = {
    "driver": "nic.example.com",
    "attributes": {
        "ports": {"ints": [1, 2, 3]},
        "modes": {"strings": ["a", "b"]},
        "flags": {"bools": [True]},
        "fw": {"versions": ["1.0.0", "2.0.0-rc.1"]},
        "name": {"string": "eth0"},
    },
    "capacity": {},
}
BIGLIST = {"driver": "d", "attributes": {"many": {"ints": list(range(49))}}, "capacity": {}}
BADVER = {"driver": "d", "attributes": {"v": {"version": "v1.2.3"}, "ok": {"int": 1}}, "capacity": {}}
EMPTYATTR = {"driver": "d", "attributes": {"weird": {}}, "capacity": {}}

D = 'device.attributes["gpu.example.com"]'
C = 'device.capacity["gpu.example.com"]'
ERR = "ERROR:"  # marker prefix for expected errors below

# (expression, device, expected, versions) ; expected: True/False, ("runtime", substr) or ("compile", substr)
V_ALL = ((1, 34), (1, 35), (1, 36), (1, 37))
ROWS = [
    # --- cel-engines.md table
    (f'{C}.memory.compareTo(quantity("24Gi")) >= 0', GPU, True, V_ALL),
    (f'{C}.memory.compareTo(quantity("24Gi")) >= 0', GPU8, False, V_ALL),
    ('device.driver == "gpu.example.com"', GPU, True, V_ALL),
    (f'{D}.model == "H100" && {D}.driverVersion.isGreaterThan(semver("550.0.0"))', GPU, True, V_ALL),
    (f'{D}.model == "H100" && {D}.driverVersion.isGreaterThan(semver("550.0.0"))', GPU_OLD, False, V_ALL),
    ('has(device.attributes["dra.example.com"].missing)', GPU, False, V_ALL),
    ('device.attributes["dra.example.com"].missing == "x"', GPU, ("runtime", "no such key: missing"), V_ALL),
    ('has(device.attributes["other.example.com"].x)', GPU, False, V_ALL),
    ('device.attributes["other.example.com"].x == 1', GPU, ("runtime", "no such key: x"), V_ALL),
    (f'{D}.model == "H100" &&', GPU, ("compile", "compilation failed: ERROR: <input>:1:"), V_ALL),
    ('device.driver + 1 == 2', GPU, ("compile", "found no matching overload for '_+_'"), V_ALL),
    ('quantity("1Gi").compareTo(semver("1.0.0")) == 0', GPU, ("compile", "found no matching overload for 'compareTo'"), V_ALL),
    ('device.driver', GPU, ("compile", "must evaluate to bool or the unknown type, not string"), V_ALL),
    ('devices.driver == "x"', GPU, ("compile", "ERROR: <input>:1:1: undeclared reference to 'devices'"), V_ALL),
    (f'{D}.model.lowerAsci() == "h100"', GPU, ("compile", "undeclared reference to 'lowerAsci'"), V_ALL),
    ('quantity("1Gi") == quantity("1024Mi")', GPU, True, V_ALL),
    ('quantity("1").add(quantity("2")) == quantity("3") && quantity("1").add(2) == quantity("3")', GPU, True, V_ALL),
    ('quantity("5").sub(quantity("2")) == quantity("3") && quantity("5").sub(2).asInteger() == 3', GPU, True, V_ALL),
    ('quantity("1.5").asApproximateFloat() == 1.5 && sign(quantity("-1")) == -1 && sign(quantity("0")) == 0', GPU, True, V_ALL),
    ('quantity("1").isInteger() && !quantity("1.5").isInteger() && quantity("1").isLessThan(quantity("2"))', GPU, True, V_ALL),
    ('quantity("1.5").asInteger() == 1', GPU, ("runtime", "cannot convert value to integer"), V_ALL),
    ('quantity("1Gi").sign() == 1', GPU,
     ("compile", "found no matching overload for 'sign' applied to 'kubernetes.Quantity.()'"), V_ALL),
    ('"1".quantity() == quantity("1")', GPU, ("compile", "found no matching overload for 'quantity' applied to 'string.()'"),
     V_ALL),
    (f'{C}.memory > quantity("1Gi")', GPU, ("compile", "found no matching overload for '_>_'"), V_ALL),
    ('isQuantity("1Gi") && !isQuantity("200K") && isSemver("1.2.3") && !isSemver("v1.2.3")', GPU, True, V_ALL),
    ('semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3', GPU, True, V_ALL),
    ('semver("1.2.3").isLessThan(semver("1.10.0")) && semver("2.0.0").compareTo(semver("1.0.0")) == 1', GPU, True, V_ALL),
    ('sign(quantity("24GB")) == 1', GPU, ("runtime", "quantities must match the regular expression"), V_ALL),
    ('quantity("200K") == quantity("200k")', GPU, ("runtime", "unable to parse quantity's suffix"), V_ALL),
    ('quantity("200M") == quantity("0.2G") && quantity("50M") != quantity("50Mi") && quantity("1e3") == quantity("1k")',
     GPU, True, V_ALL),
    (f'{C}.memory.isGreaterThan(quantity("10G"))', GPU, True, V_ALL),
    ('[1,2,3].all(x, x > 0) && [1].exists(x, x == 1) && [1,2].exists_one(x, x == 1) && '
     '[1,2].map(x, x * 2) == [2,4] && [1,2,3].filter(x, x > 1) == [2,3] && has(device.attributes["gpu.example.com"].model)',
     GPU, True, V_ALL),
    (f'{D}.model.startsWith("H") && {D}.model.endsWith("100") && {D}.model.contains("10") && '
     f'{D}.model.matches("^H[0-9]+$") && size({D}.model) == 4', GPU, True, V_ALL),
    (f'{D}.model.lowerAscii() == "h100" && "A".upperAscii() == "A" && "a,b".split(",") == ["a","b"] && '
     '["a","b"].join("-") == "a-b" && "abc".substring(1) == "bc"', GPU, True, V_ALL),
    (f'{D}.?model.orValue("none") == "H100" && {D}.?nope.orValue("none") == "none"', GPU, True, V_ALL),
    ('cel.bind(g, device.attributes["gpu.example.com"], g.model == "H100" && g.index == 0)', GPU, True, V_ALL),
    (f'{D}.model == 1', GPU, False, V_ALL),
    (f'{D}.index < 1.5', GPU, True, V_ALL),
    ('device.allowMultipleAllocations == false', GPU, True, V_ALL),
    # --- device fields and domains
    ('device.name == "gpu-0"', GPU, ("compile", "undefined field"), V_ALL),
    ('device.pool == "p"', GPU, ("compile", "undefined field"), V_ALL),
    ('device.attributes["gpu.example.com"]["model"] == "H100"', GPU, True, V_ALL),
    ('device.attributes["gpu.example.com"].index == 0 && device.attributes["dra.example.com"].healthy', GPU, True, V_ALL),
    ('"gpu.example.com" in device.attributes && !("other.com" in device.attributes)', GPU, True, V_ALL),
    ('"model" in device.attributes["gpu.example.com"] && !("nope" in device.attributes["gpu.example.com"])', GPU, True, V_ALL),
    ('size(device.attributes["other.com"]) == 0', GPU, True, V_ALL),
    ('has(device.attributes["gpu.example.com"].x) && device.attributes["gpu.example.com"].x', GPU, True, V_ALL),
    ('"gpu.example.com" in device.capacity && has(device.capacity["other"].memory) == false', GPU, True, V_ALL),
    ('device.capacity["other.com"].memory.isInteger()', GPU, ("runtime", "no such key: memory"), V_ALL),
    ('device.attributes["gpu.example.com"].nope == 1', GPU, ("runtime", "no such key: nope"), ((1, 34), (1, 35), (1, 36))),
    # --- attribute types
    (f'{D}.driverVersion == semver("550.54.15") && {D}.driverVersion.major() == 550', GPU, True, V_ALL),
    (f'{D}.driverVersion.compareTo(semver("550.54.15+build.1")) == 0', GPU, True, V_ALL),
    ('device.attributes["d"].ok == 1', BADVER, ("runtime", "attribute v: parse semantic version:"), V_ALL),
    ('true', EMPTYATTR, ("runtime", "attribute weird: unsupported attribute value"), V_ALL),
    # --- semver library
    ('semver("1.0.0") == semver("1.0.0+build")', GPU, True, V_ALL),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0")) && semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta"))',
     GPU, True, V_ALL),
    ('semver("1.0.0-2").isLessThan(semver("1.0.0-10")) && semver("1.0.0-rc.1").isLessThan(semver("1.0.0-rc.1.1"))',
     GPU, True, V_ALL),
    ('semver("v1.2.3", true) == semver("1.2.3") && semver("1", true) == semver("1.0.0") && '
     'semver("1.2", true) == semver("1.2.0") && semver("01.02.03", true) == semver("1.2.3")', GPU, True, V_ALL),
    ('isSemver("v1.2", true) && !isSemver("1.2") && !isSemver("01.2.3") && !isSemver("1.2-rc.1", true)', GPU, True, V_ALL),
    ('semver("1.2") == semver("1.2.0")', GPU, ("runtime", "No Major.Minor.Patch elements found"), V_ALL),
    ('semver("v1.2.3") == semver("1.2.3")', GPU, ("runtime", "Invalid character(s) found in major number"), V_ALL),
    # --- equality between Semver/Quantity and other types
    (f'{D}.driverVersion == "550.54.15"', GPU, ("runtime", "no such overload"), V_ALL),
    # cel-go's != negates lhs.Equal(rhs) without surfacing the error: true, not an error
    (f'{D}.driverVersion != "550.54.15"', GPU, True, V_ALL),
    (f'"550.54.15" == {D}.driverVersion', GPU, False, V_ALL),
    ('quantity("1") == 1', GPU, ("compile", "found no matching overload for '_==_'"), V_ALL),
    (f'{D}.model == "H100" || {D}.driverVersion == "x"', GPU, True, V_ALL),
    # --- heterogeneous / numeric
    ('dyn(1) == dyn("1")', GPU, False, V_ALL),
    ('dyn(1) == 1.0 && 1 < 1.5 && 2.0 > 1 && dyn(1u) == 1', GPU, True, V_ALL),
    (f'{D}.model > 0', GPU, ("runtime", "no such overload"), V_ALL),
    (f'{D}.driverVersion > "1.0"', GPU, ("runtime", "no such overload"), V_ALL),
    (f'{C}.memory.asApproximateFloat() > 10', GPU, True, V_ALL),
    # --- error absorption (&& / || commutative)
    (f'false && {D}.nope == 1', GPU, False, V_ALL),
    (f'{D}.nope == 1 && false', GPU, False, V_ALL),
    (f'true || {D}.nope == 1', GPU, True, V_ALL),
    (f'{D}.nope == 1 || true', GPU, True, V_ALL),
    (f'{D}.nope == 1 || false', GPU, ("runtime", "no such key: nope"), V_ALL),
    # --- strings ext v2 (no reverse), sets, lists v3, k8s lists, regex
    ('"abc".charAt(1) == "b" && "abc".indexOf("c") == 2 && "abcabc".lastIndexOf("abc") == 3 && '
     '"a-b".replace("-", "+") == "a+b" && " x ".trim() == "x" && "%s=%s".format(["a", "b"]) == "a=b" && "%d".format([dyn(1)]) == "1" && '
     'strings.quote("a") == "\\"a\\""', GPU, True, V_ALL),
    ('"abc".reverse() == "cba"', GPU, ("compile", "found no matching overload for 'reverse' applied to 'string.()'"), V_ALL),
    (f'{D}.model.exists(c, true)', GPU, ("runtime", "got 'types.String', expected iterable type"), ((1, 37),)),
    (f'cel.bind(m, {D}.index, m.all(c, true))', GPU, ("runtime", "got 'types.Int', expected iterable type"), ((1, 37),)),
    ('sets.contains([1,2,3], [1,2]) && sets.equivalent([1,1,2], [2,1]) && sets.intersects([1], [1,5])', GPU, True, V_ALL),
    ('[1,1,2].distinct() == [1,2] && [[1],[2,3]].flatten() == [1,2,3] && lists.range(3) == [0,1,2] && '
     '[1,2,3].reverse() == [3,2,1] && [1,2,3,4].slice(1,3) == [2,3] && [3,1,2].sort() == [1,2,3] && '
     '[1,2,3].sortBy(x, -x) == [3,2,1]', GPU, True, V_ALL),
    ('[1,2,3].isSorted() && [1,2,3].sum() == 6 && [1,2,3].min() == 1 && [1,2,3].max() == 3 && '
     '[1,2,3,2].indexOf(2) == 1 && [1,2,3,2].lastIndexOf(2) == 3 && [1.5, 2.5].sum() == 4.0 && !["b","a"].isSorted()',
     GPU, True, V_ALL),
    ('"abc123def456".find("[0-9]+") == "123" && "abc123def456".findAll("[0-9]+") == ["123", "456"] && '
     '"a1b2c3".findAll("[0-9]", 2) == ["1", "2"] && "abc".find("x") == ""', GPU, True, V_ALL),
    ('"abc".matches("^a.c$") && !"abc".matches("^b")', GPU, True, V_ALL),
    ('"aaa".find("(?=a)") == ""', GPU,
     ("compile", "program instantiation failed: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"), V_ALL),
    ('"aaa".matches("[")', GPU, ("compile", "compilation failed: ERROR: <input>:1:15: invalid matches argument"), V_ALL),
    ('matches("aaa", "a**")', GPU,
     ("compile", "program instantiation failed: error parsing regexp: invalid nested repetition operator: `**`"), V_ALL),
    ('"aaa".findAll("(") == []', GPU, ("compile", "program instantiation failed: error parsing regexp: missing closing ): `(`"),
     V_ALL),
    (f'"aaa".find({D}.model + "(") == ""', GPU, ("runtime", "Illegal regex: error parsing regexp: missing closing ): `H100(`"),
     V_ALL),
    (f'"aaa".matches({D}.model + "(")', GPU, ("runtime", "error parsing regexp"), V_ALL),
    ('"a\\u00e9b".find("[^a-z]") == "\\u00e9" && "x".find("") == "" && "aaa".findAll("a*") == ["aaa"]', GPU, True, V_ALL),
    ('"ab".find("\\\\pL+") == "ab" && "a1".find("\\\\d") == "1" && "AB".find("(?i)b") == "B"', GPU, True, V_ALL),
    ('"ab".find("(a)(b)") == "ab" && "xaby".findAll("(?P<n>a)b") == ["ab"]', GPU, True, V_ALL),
    # --- optional types
    ('optional.of(1).hasValue() && !optional.none().hasValue() && optional.of(1).value() == 1 && '
     '{"a": 1}[?"b"].orValue(5) == 5 && [1,2][?5].orValue(0) == 0 && optional.ofNonZeroValue(0).orValue(9) == 9 && '
     'optional.none().or(optional.of(2)).value() == 2', GPU, True, V_ALL),
    # --- two-variable comprehensions
    ('[10, 20].all(i, v, v == (i + 1) * 10) && {"a": 1}.exists(k, v, k == "a" && v == 1) && '
     '[1,2].existsOne(i, v, v == 2) && [1,2].transformList(i, v, v * 2) == [2, 4]', GPU, True, V_ALL),
    # --- k8s URL / IP / CIDR libraries
    ('url("https://example.com:8080/path?x=1").getHost() == "example.com:8080" && '
     'url("https://example.com:8080/p").getPort() == "8080" && url("https://example.com/p").getScheme() == "https" && '
     'url("https://example.com/p?x=1&x=2").getQuery()["x"] == ["1", "2"] && isURL("/abs") && !isURL("rel")',
     GPU, True, V_ALL),
    ('ip("10.0.0.1").family() == 4 && ip("::1").isLoopback() && isIP("1.2.3.4") && !isIP("1.2.3") && '
     'cidr("10.0.0.0/8").containsIP("10.1.2.3") && cidr("10.0.0.0/8").containsIP(ip("10.1.2.3")) && '
     'cidr("10.0.0.0/8").prefixLength() == 8 && cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16") && '
     'isCIDR("10.0.0.0/8") && ip.isCanonical("10.0.0.1")', GPU, True, V_ALL),
    # --- non-bool result at runtime
    (f'{D}.model', GPU, ("runtime", "CEL result of type string could not be converted to bool"), V_ALL),
    ('dyn(1)', GPU, ("runtime", "CEL result of type int could not be converted to bool"), ((1, 37),)),
    ('dyn(1.5)', GPU, ("runtime", "CEL result of type double could not be converted to bool"), ((1, 37),)),
    ('dyn(null)', GPU, ("runtime", "CEL result of type null_type could not be converted to bool"), ((1, 37),)),
    ('dyn({})', GPU, ("runtime", "CEL result of type map could not be converted to bool"), ((1, 37),)),
    ('dyn(b"a")', GPU, ("runtime", "CEL result of type bytes could not be converted to bool"), ((1, 37),)),
    ('dyn(1u)', GPU, ("runtime", "CEL result of type uint could not be converted to bool"), ((1, 37),)),
    ('dyn(quantity("1"))', GPU, ("runtime", "CEL result of type kubernetes.Quantity could not be converted"), ((1, 37),)),
    ('dyn([1])', GPU, ("runtime", "CEL result of type list could not be converted to bool"), ((1, 37),)),
    ('dyn(1)', GPU, ("compile", "must evaluate to bool or the unknown type, not dyn"), ((1, 34), (1, 35), (1, 36))),
    (f'true ? {D}.healthy2 : {D}.model', GPU, ("runtime", "no such key: healthy2"), ((1, 34), (1, 35), (1, 36))),
    (f'{D}.driverVersion', GPU, ("runtime", "CEL result of type kubernetes.Semver could not be converted to bool"), V_ALL),
    (f'{D}.index', GPU, ("runtime", "CEL result of type int could not be converted to bool"), V_ALL),
    (f'{D}.healthy', GPU, ("runtime", "no such key: healthy"), ((1, 34), (1, 35), (1, 36))),
    ('device.attributes["dra.example.com"].healthy', GPU, True, V_ALL),
    ('dyn(true)', GPU, ("compile", "must evaluate to bool or the unknown type, not dyn"), ((1, 34), (1, 35), (1, 36))),
    ('dyn(true)', GPU, True, ((1, 37),)),
    (f'{D}.model + 1 == "a"', GPU, ("compile", "found no matching overload for '_==_'"), V_ALL),
    (f'{D}.model > 1', GPU, ("runtime", "no such overload"), V_ALL),
    (f'{D}.x + 1 == 2', GPU, ("runtime", "no such overload: _+_"), V_ALL),
    (f'-{D}.model == 1', GPU, ("runtime", "no such overload"), V_ALL),
    (f'!{D}.model', GPU, ("runtime", "no such overload"), V_ALL),
    (f'size({D}.x) == 1', GPU, ("runtime", "no such overload: size"), V_ALL),
    ('int("x") == 1', GPU, ("compile", "program instantiation failed: type conversion error from 'string' to 'int'"), V_ALL),
    (f'int({D}.model) == 1', GPU, ("runtime", "type conversion error from 'string' to 'int'"), V_ALL),
    (f'int({D}.index) == 0 && string({D}.index) == "0" && double({D}.index) == 0.0', GPU, True, V_ALL),
    ('1 % 0 == 1', GPU, ("runtime", "modulus by zero"), V_ALL),
    ('{"a": 1}["b"] == 1', GPU, ("runtime", "no such key: b"), V_ALL),
    (f'{D}.driverVersion.major() + 1 == 551 && {D}.driverVersion.isLessThan(semver("600.0.0"))', GPU, True, V_ALL),
    (f'{C}.memory.add(1).sub(1) == {C}.memory && {C}.memory.asInteger() == 25769803776', GPU, True, V_ALL),
    (f'{C}.memory == quantity("24Gi") && {C}.memory != quantity("24G")', GPU, True, V_ALL),
    ('quantity("0.1n").isInteger() == false && quantity("1m").asApproximateFloat() == 0.001', GPU, True, V_ALL),
    # isInteger/asInteger depend on resource.Quantity's internal form (int64Amount vs inf.Dec)
    ('!quantity("9223372036854775807").isInteger() && quantity("922337203685477580").isInteger()', GPU, True, V_ALL),
    ('!quantity("1.0").isInteger() && !quantity("1000m").isInteger() && quantity("1.5k").isInteger() && '
     '!quantity("0.5Gi").isInteger() && quantity("24Gi").isInteger() && quantity("1e3").asInteger() == 1000', GPU, True, V_ALL),
    ('quantity("1").add(quantity("0.5")).add(quantity("0.5")).isInteger()', GPU, False, V_ALL),
    ('quantity("1").add(1).asInteger() == 2 && quantity("5").sub(quantity("2")).isInteger()', GPU, True, V_ALL),
    ('quantity("0.1").asApproximateFloat() == 0.1 && quantity("1Ki").asApproximateFloat() == 1024.0 && '
     'quantity("123456789012345678901").asApproximateFloat() > 1.0e20', GPU, True, V_ALL),
    ('[quantity("1Gi")].exists(q, q == quantity("1024Mi")) && quantity("1") != quantity("2")', GPU, True, V_ALL),
    ('quantity("9223372036854775808").asInteger() == 0', GPU, ("runtime", "cannot convert value to integer"), V_ALL),
    ('isQuantity("") == false && isQuantity("1.") && isQuantity(".5") && !isQuantity("1..2") && isQuantity("e3") && '
     '!isQuantity("e") && isQuantity("1E") && !isQuantity("1.2.3") && isQuantity("-0.5Gi")', GPU, True, V_ALL),
    (f'{C}.memory.add(quantity("1Gi")).compareTo(quantity("25Gi")) == 0', GPU, True, V_ALL),
    ('device.capacity["gpu.example.com"]["memory"].isGreaterThan(quantity("1"))', GPU, True, V_ALL),
    ('device.attributes.exists(d, d == "gpu.example.com") && device.capacity.all(d, size(device.capacity[d]) > 0)',
     GPU, True, V_ALL),
    ('"gpu.example.com" in device.attributes && "model" in device.attributes["gpu.example.com"]', GPU, True, V_ALL),
    (f'has({D}.model) && !has({D}.nope) && {D}.?nope.hasValue() == false', GPU, True, V_ALL),
    ('device.attributes["gpu.example.com"]["nope"] == 1', GPU, ("runtime", "no such key: nope"), ((1, 34), (1, 35), (1, 36))),
    ('semver("1.2.3-rc.1+b") == semver("1.2.3-rc.1") && semver("1.2.3-rc.1") != semver("1.2.3")', GPU, True, V_ALL),
    ('semver("1.2.3").compareTo(semver("1.2.3-alpha")) == 1 && semver("1.0.0-alpha.1") .isLessThan(semver("1.0.0-alpha.1.0"))',
     GPU, True, V_ALL),
    ('semver("1.2.3-01") == semver("1.2.3")', GPU, ("runtime", "Numeric PreRelease version must not contain leading zeroes"),
     V_ALL),
    ('semver("1.2.03") == semver("1.2.3")', GPU, ("runtime", "Patch number must not contain leading zeroes"), V_ALL),
    ('semver("1.2.3.4") == semver("1.2.3")', GPU, ("runtime", "Invalid character(s) found in patch number"), V_ALL),
    ('semver("") == semver("1.2.3")', GPU, ("runtime", "Version string empty"), V_ALL),
    ('semver("1.2.3-") == semver("1.2.3")', GPU, ("runtime", "Prerelease is empty"), V_ALL),
    ('semver("1.2.3+") == semver("1.2.3")', GPU, ("runtime", "Build meta data is empty"), V_ALL),
    ('semver("1.2.3-a_b") == semver("1.2.3")', GPU, ("runtime", "Invalid character(s) found in prerelease"), V_ALL),
    ('semver("v1.2-rc.1", true) == semver("1.2.0-rc.1")', GPU, ("runtime", 'Invalid character(s) found in minor number "2-rc"'),
     V_ALL),
    ('semver("1.2-rc", true) == semver("1.0.0")', GPU, ("runtime", "short version cannot contain PreRelease/Build meta data"),
     V_ALL),
    ('semver("v00.0010.00", true) == semver("0.10.0") && isSemver("1.2.3-0a", true)', GPU, True, V_ALL),
    ('"%s=%d".format(["a", 1]) == "a=1"', GPU, True, V_ALL),
    ('[[1], []].size() == 2', GPU, True, V_ALL),
    ('["a"].asList() == ["a"]', GPU, ("compile", "undeclared reference to 'asList'"), V_ALL),
    (f'{D}.driverVersion.includes("550.54.15") == false', GPU, True, ((1, 36), (1, 37))),
    ('1.includes(1.0) && !1.includes("1")', GPU, True, ((1, 36), (1, 37))),
    ('semver("v01.02", true) == semver("1.2.0") && semver("1.2.3+build", true) == semver("1.2.3")', GPU, True, V_ALL),
    # --- list attributes (1.36 gated, 1.37 always)
    ('device.attributes["nic.example.com"].ports.exists(p, p == 2)', LISTS, True, ((1, 37),)),
    ('device.attributes["nic.example.com"].ports.includes(2) && device.attributes["nic.example.com"].name.includes("eth0")'
     ' && device.attributes["nic.example.com"].fw.includes(semver("2.0.0-rc.1"))', LISTS, True, ((1, 37),)),
    ('device.attributes["nic.example.com"].modes.includes("c")', LISTS, False, ((1, 37),)),
    ('device.attributes["nic.example.com"].name == "eth0"', LISTS,
     ("runtime", "unsupported attribute value"), ((1, 34), (1, 35), (1, 36))),
    ('device.attributes["d"].many.includes(1) && device.attributes["d"].many.includes(47)', BIGLIST, True, ((1, 37),)),
    # the 48-item limit of dra-facts §1.5 exists in v0.36.6 but not in v0.37.2 (upstream oracle)
    ('device.attributes["d"].many.includes(999)', BIGLIST, False, ((1, 37),)),
    ('[1,2].includes(2)', GPU, ("compile", "includes"), ((1, 34), (1, 35))),
    ('[1,2].includes(2) && 1.includes(1) && !"a".includes("b")', GPU, True, ((1, 36), (1, 37))),
    # --- cost limit (1,000,000 per evaluation); boundaries measured with the upstream oracle
    ('lists.range(2000).all(i, lists.range(2000).all(j, i >= 0))', GPU,
     ("runtime", "operation cancelled: actual cost limit exceeded"), ((1, 36),)),
    ('lists.range(1000000).size() > 0', GPU, ("runtime", "operation cancelled: actual cost limit exceeded"), ((1, 36),)),
    ('lists.range(300000).size() > 0', GPU, True, ((1, 36),)),
    ('lists.range(1000).sort().size() > 0', GPU, ("runtime", "operation cancelled: actual cost limit exceeded"),
     ((1, 36),)),
    ('lists.range(700).sort().size() > 0', GPU, True, ((1, 36),)),
    ('lists.range(1000).distinct().size() > 0', GPU, ("runtime", "operation cancelled: actual cost limit exceeded"),
     ((1, 36),)),
    ('lists.range(300).distinct().size() > 0', GPU, True, ((1, 36),)),
    ('lists.range(200000).exists(i, i == 0)', GPU, True, ((1, 36),)),
    ('lists.range(5000).filter(i, i % 2 == 0).size() > 0', GPU, True, ((1, 36),)),
    ('[1,2,3].map(x, lists.range(300000)).size() == 3', GPU, True, ((1, 36),)),
    ('"x".replace("", "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy").replace("", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")'
     '.replace("", "wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww").size() > 0', GPU, True, ((1, 36),)),
    ('device.attributes.all(d, device.attributes[d].all(k, true))', GPU, True, V_ALL),
    # --- misc core semantics
    ('1 / 0 == 1', GPU, ("runtime", "division by zero"), V_ALL),
    ('[1][3] == 1', GPU, ("runtime", "index out of bounds: 3"), V_ALL),
    ('[1, "a"].size() == 2', GPU, ("compile", "expected type 'int' but found 'string'"), V_ALL),
    ('[1, dyn("a")].size() == 2', GPU, ("compile", "expected type 'int' but found 'dyn'"), V_ALL),
    ('{"a": 1, "b": dyn("x")}.size() == 2', GPU, ("compile", "expected type 'int' but found 'dyn'"), V_ALL),
    ('[dyn(1), dyn("a")].size() == 2 && {"a": dyn(1), "b": dyn("x")}.size() == 2', GPU, True, V_ALL),
    ('{"a": 1, "b": "x"}.size() == 2', GPU, ("compile", "expected type 'int' but found 'string'"), V_ALL),
    (f'{D}.model.exists(c, true)', GPU,
     ("compile", "expression of type 'any' cannot be range of a comprehension"), ((1, 34), (1, 35), (1, 36))),
    (f'cel.bind(m, {D}.model, m.exists(c, true))', GPU,
     ("compile", "expression of type 'any' cannot be range of a comprehension"), ((1, 34), (1, 35), (1, 36))),
]


# Expressions Kubernetes evaluates but the local engine cannot (expected Kubernetes value, reason).
KNOWN_DIFFERENCES = [
    ('lists.range(100).all(i, lists.range(100).all(j, i >= 0))', GPU, True,
     "cel-cpp aborts after 10,000 comprehension iterations per evaluation"),
    ('lists.range(30000).filter(i, i % 2 == 0).size() > 0', GPU, True,
     "cel-cpp aborts after 10,000 comprehension iterations per evaluation"),
    ('{"a": 1}.transformMap(k, v, v + 1) == {"a": 2}', GPU, True,
     "cel-expr-python 0.1.3 lacks the runtime function cel.@mapInsert used by transformMap/transformMapEntry"),
    ('format.dns1123Label().validate("abc").hasValue() == false', GPU, True,
     "the Kubernetes format library is not implemented (it returns optionals, which Python functions cannot)"),
]
