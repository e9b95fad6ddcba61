"""cel-go v0.33's symbol catalog for "did you mean" suggestions in undeclared-reference errors (Kubernetes
1.38; cel-go v0.29 of 1.34-1.37 has none and always adds " (in container '')").

cel.dev/cel-go/common/env/catalog.go Find and EditDistance, checker/errors.go formatSuggestionSuffix.  The
symbols are what cel/env.go initChecker puts into the catalog for the DRA stored-expressions environment of
k8s.io/dynamic-resource-allocation v0.38.0-beta.0 (its ToConfig variables and functions, every declared
function, the standard types and the macros), dumped from that environment.
"""

from __future__ import annotations

import re

SYMBOLS_138 = (
    "!_",
    "-_",
    "@in",
    "@not_strictly_false",
    "@sortByAssociatedKeys",
    "_!=_",
    "_%_",
    "_&&_",
    "_*_",
    "_+_",
    "_-_",
    "_/_",
    "_<=_",
    "_<_",
    "_==_",
    "_>=_",
    "_>_",
    "_?._",
    "_?_:_",
    "_[?_]",
    "_[_]",
    "__not_strictly_false__",
    "_in_",
    "_||_",
    "add",
    "all",
    "allowed",
    "asApproximateFloat",
    "asInteger",
    "bind",
    "bool",
    "bytes",
    "cel.@mapInsert",
    "charAt",
    "check",
    "cidr",
    "compareTo",
    "contains",
    "containsCIDR",
    "containsIP",
    "device",
    "distinct",
    "double",
    "duration",
    "dyn",
    "endsWith",
    "error",
    "errored",
    "exists",
    "existsOne",
    "exists_one",
    "family",
    "fieldSelector",
    "filter",
    "find",
    "findAll",
    "first",
    "flatten",
    "format",
    "format.byte",
    "format.date",
    "format.datetime",
    "format.dns1035Label",
    "format.dns1035LabelPrefix",
    "format.dns1123Label",
    "format.dns1123LabelPrefix",
    "format.dns1123Subdomain",
    "format.dns1123SubdomainPrefix",
    "format.labelValue",
    "format.named",
    "format.qualifiedName",
    "format.uri",
    "format.uuid",
    "getDate",
    "getDayOfMonth",
    "getDayOfWeek",
    "getDayOfYear",
    "getEscapedPath",
    "getFullYear",
    "getHost",
    "getHostname",
    "getHours",
    "getMilliseconds",
    "getMinutes",
    "getMonth",
    "getPort",
    "getQuery",
    "getScheme",
    "getSeconds",
    "google.protobuf.Duration",
    "google.protobuf.Timestamp",
    "group",
    "has",
    "hasValue",
    "in",
    "includes",
    "indexOf",
    "int",
    "ip",
    "ip.isCanonical",
    "isCIDR",
    "isGlobalUnicast",
    "isGreaterThan",
    "isIP",
    "isInteger",
    "isLessThan",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isLoopback",
    "isMask",
    "isQuantity",
    "isSemver",
    "isSorted",
    "isURL",
    "isUnspecified",
    "join",
    "labelSelector",
    "last",
    "lastIndexOf",
    "list",
    "lists.range",
    "lowerAscii",
    "major",
    "map",
    "masked",
    "matches",
    "max",
    "min",
    "minor",
    "name",
    "namespace",
    "null_type",
    "optFlatMap",
    "optMap",
    "optional.none",
    "optional.of",
    "optional.ofNonZeroValue",
    "optional.unwrap",
    "or",
    "orValue",
    "patch",
    "path",
    "prefixLength",
    "quantity",
    "reason",
    "replace",
    "resource",
    "reverse",
    "semver",
    "serviceAccount",
    "sets.contains",
    "sets.equivalent",
    "sets.intersects",
    "sign",
    "size",
    "slice",
    "sort",
    "sortBy",
    "split",
    "startsWith",
    "string",
    "strings.quote",
    "sub",
    "subresource",
    "substring",
    "sum",
    "timestamp",
    "transformList",
    "transformMap",
    "transformMapEntry",
    "trim",
    "type",
    "uint",
    "unwrapOpt",
    "upperAscii",
    "url",
    "validate",
    "value",
)
_INF = 1 << 31


def edit_distance(a: str, b: str) -> int:
    """Damerau-Levenshtein (optimal string alignment) with cel-go's shortcuts and early exit."""
    la, lb = len(a), len(b)
    if la == 0:
        return lb
    if lb == 0:
        return la
    if la >= 16 and la * 2 >= lb * 3:
        return la - lb
    if lb >= 16 and lb * 2 >= la * 3:
        return lb - la
    if la * lb > 64 * 64:
        return _INF
    threshold = max(la, lb) // 3
    d = [[0] * (lb + 1) for _ in range(la + 1)]
    for i in range(la + 1):
        d[i][0] = i
    for j in range(lb + 1):
        d[0][j] = j
    for i in range(1, la + 1):
        row_min = d[i][0]
        for j in range(1, lb + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            v = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, d[i - 2][j - 2] + 1)
            d[i][j] = v
            row_min = min(row_min, v)
        if row_min > threshold:
            return _INF
    return d[la][lb]


def find(name: str, symbols=SYMBOLS_138) -> list[str]:
    """Catalog.Find: the exact symbol, else up to two closest by edit distance (shortest first, then
    alphabetical), else up to two with the name as prefix (names of at least two characters)."""
    if not name:
        return []
    if name in symbols:
        return [name]
    dotted = "." in name
    n = len(name)
    max_dist = 1 if n <= 3 else (n // 3 if n > 8 else 2)
    best: list[tuple[int, str]] = []
    for sym in symbols:
        if ("." in sym) != dotted:
            continue
        dist = edit_distance(name, sym)
        if dist <= max_dist:
            best.append((dist, sym))
    if best:
        low = min(d for d, _ in best)
        return sorted((s for d, s in best if d == low), key=lambda s: (len(s), s))[:2]
    if n >= 2:
        pre = sorted((s for s in symbols if ("." in s) == dotted and s.startswith(name)), key=lambda s: (len(s), s))
        return pre[:2]
    return []


def suggestion(name: str) -> str:
    """formatSuggestionSuffix (no symbol of this environment needs an `enable with` option)."""
    syms = find(name)
    if not syms or (len(syms) == 1 and syms[0] == name):
        return ""
    if len(syms) == 1:
        return f" (did you mean '{syms[0]}'?)"
    return f" (did you mean '{syms[0]}' or '{syms[1]}'?)"


# ------------------------------------------------------------------ undeclared references in cel-go v0.33
_BLOCK = re.compile(r"^ERROR: <input>:(\d+):(\d+): (.*)$")
_UNDECLARED = re.compile(r"^undeclared reference to '([^']*)' \(in container ''\)$")
# qualified names the checker resolves as identifiers (a chain through them is not undeclared)
_QUALIFIED_TYPES = ("google.protobuf.Duration", "google.protobuf.Timestamp")


def _chain(toks, k: int) -> list[int]:
    """Token indexes of the identifiers of `a.b.c` starting at token k."""
    out = [k]
    while (
        out[-1] + 2 < len(toks)
        and toks[out[-1] + 1].text == "."
        and toks[out[-1] + 2].kind == "ident"
        and toks[out[-1] + 1].end == toks[out[-1] + 1].start + 1
    ):
        out.append(out[-1] + 2)
    return out


# long: mirrors cel-go v0.33's reference check, case by case
def undeclared_references_v033(message: str, src: str) -> str:
    """cel-go v0.33's wording of undeclared references, from cel-go v0.29's (which this engine's messages
    follow): no " (in container '')" for the empty container, a "did you mean" suggestion from the catalog,
    and a qualified name looked up as a whole first (checker.go checkSelect/checkCall with
    checkUndeclaredIdent/checkUndeclaredFunction): `sets.contain(x)` is one error "undeclared reference to
    'sets.contain' (did you mean 'sets.contains'?)" at the call instead of one for `sets` and one for
    `contain`."""
    from ._checks import format_issue
    from ._source import tokenize

    if "(in container '')" not in message:
        return message
    head = "compilation failed: "
    body = message[len(head) :] if message.startswith(head) else message
    blocks: list[list[str]] = []
    for line in body.split("\n"):
        if line.startswith("ERROR: ") or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    line_starts = [0] + [i + 1 for i, c in enumerate(src) if c == "\n"]
    issues: list[tuple[int, str | None, str]] = []  # (offset, undeclared name or None, block text)
    for b in blocks:
        m = _BLOCK.match(b[0])
        if not m:
            issues.append((-1, None, "\n".join(b)))
            continue
        line, col = int(m.group(1)), int(m.group(2))
        off = (line_starts[line - 1] if 0 < line <= len(line_starts) else 0) + col - 1
        u = _UNDECLARED.match(m.group(3))
        issues.append((off, u.group(1) if u else None, "\n".join(b)))
    toks = tokenize(src)
    by_start = {t.start: k for k, t in enumerate(toks)}
    dropped: set[int] = set()  # offsets of cel-cpp issues replaced by a qualified one
    added: list[tuple[int, str]] = []
    for off, name, _text in issues:
        if name is None or off in dropped:
            continue
        k = by_start.get(off)
        if k is None or toks[k].kind != "ident" or toks[k].text != name:
            continue
        if k > 0 and toks[k - 1].text in (".", ".?"):
            continue  # not the start of a qualified name
        chain = _chain(toks, k)
        names = [toks[i].text for i in chain]
        if any(".".join(names[:i]) in _QUALIFIED_TYPES for i in range(2, len(names))):
            continue
        call = chain[-1] + 1 < len(toks) and toks[chain[-1] + 1].text == "("
        test_only = k >= 2 and toks[k - 1].text == "(" and toks[k - 2].text == "has"
        found: tuple[int, str] | None = None
        if call and len(chain) > 1:
            full = ".".join(names)
            if find(full):
                paren = toks[chain[-1] + 1].start
                found = (paren, full)
                dropped.add(paren)  # cel-cpp's "undeclared reference to '<function>'" there
            else:
                chain, names = chain[:-1], names[:-1]
        elif test_only and len(chain) > 1:
            chain, names = chain[:-1], names[:-1]  # has(a.b): the outer select is no qualified name
        if found is None:
            for n in range(len(chain), 1, -1):
                full = ".".join(names[:n])
                if find(full):
                    found = (toks[chain[n - 1] - 1].start, full)
                    break
        if found is not None:
            dropped.add(off)
            added.append((found[0], f"undeclared reference to '{found[1]}'{suggestion(found[1])}"))
    out: list[tuple[int, str]] = []
    for off, name, text in issues:
        if off in dropped and name is not None:
            continue
        if name is not None:
            first, _, rest = text.partition("\n")
            first = first.replace(" (in container '')", suggestion(name))
            text = first + ("\n" + rest if rest else "")
        out.append((off, text))
    out += [(off, format_issue(src, off, msg)) for off, msg in added]
    out.sort(key=lambda x: x[0])
    return head + "\n".join(text for _, text in out)
