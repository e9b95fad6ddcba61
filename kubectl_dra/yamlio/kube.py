"""YAML as Kubernetes reads it. `kubectl apply -f` decodes YAML with sigs.k8s.io/yaml, which runs go-yaml v2 into
untyped values and converts them to JSON; kubectl-dra reads a file the way the object would reach the API server.
PyYAML's own SafeLoader is YAML 1.1 and reads some plain scalars otherwise: `y`/`n` are strings to it (booleans to
go-yaml), `0000:00:04.0` a base-60 float (a string: a PCI address), `1e3` a string (a float), `2026-11-30` a date (a
string). KubeLoader keeps libyaml's parser and replaces the resolution and construction of plain scalars with
go-yaml v2's (go.yaml.in/yaml/v2 resolve.go) and map keys with sigs.k8s.io/yaml's (convertToJSONableObject):

- booleans: y Y yes Yes YES true True TRUE on On ON / n N no No NO false False FALSE off Off OFF;
- null: empty, ~, null, Null, NULL; .nan .NaN .NAN, [+-].inf .Inf .INF; `<<` merges;
- a scalar starting with a digit or a sign: a timestamp (kept as its text), else an integer as Go's
  strconv.ParseInt(s, 0, 64) reads it with underscores removed (0x, 0o, 0b, a leading 0 for octal), else an unsigned
  64-bit one, else a float when it has YAML's float form and fits a float64; one starting with `.`: a float as
  ParseFloat reads it;
- everything else, and every quoted scalar, a string; map keys that are numbers or booleans become their text."""

from __future__ import annotations

import math
import re
import struct

TRUE = frozenset("y Y yes Yes YES true True TRUE on On ON".split())
FALSE = frozenset("n N no No NO false False FALSE off Off OFF".split())
NULL = frozenset(("", "~", "null", "Null", "NULL"))
SPECIAL = {
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")  # go-yaml's yamlStyleFloat
# strconv.ParseFloat's decimal syntax: underscores only between digits (Python's float() takes the same)
_D = r"[0-9](?:_?[0-9])*"
_GO_FLOAT = re.compile(rf"[-+]?(?:{_D}(?:\.(?:{_D})?)?|\.{_D})(?:[eE][-+]?{_D})?")
_DATE = re.compile(r"[0-9]{4}-")  # go-yaml's parseTimestamp starts so
_BASE60 = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")  # go-yaml's encoder: base60float
_INT64 = (-(2**63), 2**63 - 1)
_UINT64 = 2**64 - 1
_TAG = "tag:yaml.org,2002:"
_MEMO: dict[str, tuple[str, object]] = {}


def resolve(value: str) -> tuple[str, object]:
    """(tag, value) of a plain scalar as go-yaml v2 resolves it for an untyped target."""
    hit = _MEMO.get(value)
    if hit is None:
        hit = _resolve(value)
        if len(_MEMO) < 100_000:
            _MEMO[value] = hit
    return hit


def _resolve(s: str) -> tuple[str, object]:
    if s in TRUE:
        return "bool", True
    if s in FALSE:
        return "bool", False
    if s in NULL:
        return "null", None
    if s in SPECIAL:
        return "float", SPECIAL[s]
    if s == "<<":
        return "merge", s
    c = s[0]
    if c == ".":
        f = _parse_float(s)
        return ("float", f) if f is not None else ("str", s)
    if not (c.isdigit() and c.isascii()) and c not in "+-":
        return "str", s
    # A timestamp (four digits and a dash first) is resolved, then handed to an untyped target as its text: a
    # string, as it would be here anyway (no such text is a number).
    plain = s.replace("_", "")
    n = _parse_int(plain)
    if n is not None and (_INT64[0] <= n <= _UINT64):
        return "int", n
    if _FLOAT.fullmatch(plain):
        f = _parse_float(plain)
        if f is not None:
            return "float", f
    return "str", s


def _parse_int(s: str) -> int | None:
    """strconv.ParseInt(s, 0, 64) / ParseUint: an optional sign (ParseUint takes none), then 0x/0o/0b, a leading 0
    (octal) or decimal digits; None when it is no such number or exceeds the 64-bit ranges."""
    sign, body = (s[0], s[1:]) if s[:1] in "+-" else ("", s)
    if not body:
        return None
    base, digits = 10, body
    low = body[:2].lower()
    if low in ("0x", "0o", "0b"):
        base, digits = {"0x": 16, "0o": 8, "0b": 2}[low], body[2:]
    elif len(body) > 1 and body[0] == "0":
        base, digits = 8, body[1:]
    if not digits or not digits.isascii() or not digits.isalnum():
        return None
    try:
        n = int(digits, base)
    except ValueError:
        return None
    n = -n if sign == "-" else n
    if sign and not _INT64[0] <= n <= _INT64[1]:
        return None  # a signed number beyond int64 is no ParseUint number either
    return n if _INT64[0] <= n <= _UINT64 else None


def _parse_float(s: str) -> float | None:
    """strconv.ParseFloat(s, 64) for decimal forms: None when malformed or out of range (Go answers ErrRange)."""
    if not _GO_FLOAT.fullmatch(s):
        return None
    f = float(s)
    return None if math.isinf(f) else f


def key_text(k) -> str | None:
    """A map key as sigs.k8s.io/yaml makes it a JSON key (None: a key it refuses, such as null)."""
    if isinstance(k, str):
        return k
    if isinstance(k, bool):
        return "true" if k else "false"
    if isinstance(k, int):
        return str(k) if _INT64[0] <= k <= _INT64[1] else None  # go-yaml's uint64 keys are refused
    if isinstance(k, float):
        return _float32_text(k)
    return None


def _float32_text(f: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 32): the shortest digits that read back as the same float32, in %e form when
    the exponent is below -4 or at least 6 (Go's rule for the shortest 'g'), else in %f form."""
    if math.isnan(f):
        return ".nan"
    if math.isinf(f):
        return ".inf" if f > 0 else "-.inf"
    want = struct.pack("f", f)
    for p in range(0, 9):
        t = f"{f:.{p}e}"
        if struct.pack("f", float(t)) == want:
            break
    mantissa, exp = t.split("e")
    e = int(exp)
    if e < -4 or e >= 6:
        return f"{mantissa}e{'-' if e < 0 else '+'}{abs(e):02d}"
    digits = mantissa.replace(".", "").lstrip("-")
    sign = "-" if math.copysign(1.0, f) < 0 else ""
    if e >= 0:
        whole, frac = digits[: e + 1].ljust(e + 1, "0"), digits[e + 1 :]
        return sign + whole + ("." + frac if frac else "")
    return sign + "0." + "0" * (-e - 1) + digits


def dumper():
    """The PyYAML dumper class (libyaml's emitter when present) that quotes every string Kubernetes would not read
    back as that string: the serializer asks the resolver whether a plain scalar resolves to its tag, and this one
    resolves as go-yaml does (`y`, `1e3`, `0o17` are quoted; PyYAML's own dumper writes them plain)."""
    global _DUMPER
    if _DUMPER is None:
        import yaml

        base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        kube_resolve = loader().resolve

        class KubeDumper(base):
            yaml_implicit_resolvers: dict = {}

            def resolve(self, kind, value, implicit):
                tag = kube_resolve(self, kind, value, implicit)
                # as go-yaml's encoder: timestamps and YAML 1.1 base-60 numbers are quoted too, for other readers
                if tag == _TAG + "str" and implicit[0] and (_DATE.match(value) or _BASE60.fullmatch(value)):
                    return _TAG + "timestamp"
                return tag

        _DUMPER = KubeDumper
    return _DUMPER


_DUMPER = None


def loader(refuse_joined: bool = True):
    """The PyYAML loader class (libyaml's parser when present) with Kubernetes' resolution; one that refuses a
    document whose root mapping repeats a key (yamlio/joined.py), or (refuse_joined=False) keeps the last as
    go-yaml does."""
    global _LOADER, _LOADER_LAST_WINS
    if _LOADER is None:
        _LOADER = _build_loader()
        _LOADER_LAST_WINS = type("KubeLoaderLastWins", (_LOADER,), {"refuse_joined": False})
    return _LOADER if refuse_joined else _LOADER_LAST_WINS


_LOADER = _LOADER_LAST_WINS = None


# long: builds the loader classes in one place so PyYAML is imported only when YAML is read
def _build_loader():
    import yaml
    from yaml.constructor import ConstructorError, SafeConstructor
    from yaml.resolver import BaseResolver

    from kubectl_dra.yamlio.joined import joined_problem, repeated_root_key

    try:
        from yaml.cyaml import CParser

        parsers: tuple = (CParser,)
    except ImportError:  # pragma: no cover - libyaml is in PyYAML's wheels for every platform kubectl-dra ships on
        from yaml.composer import Composer
        from yaml.parser import Parser
        from yaml.reader import Reader
        from yaml.scanner import Scanner

        parsers = (Reader, Scanner, Parser, Composer)

    class KubeResolver(BaseResolver):
        yaml_implicit_resolvers: dict = {}

        def resolve(self, kind, value, implicit):
            if kind is yaml.ScalarNode and implicit[0]:
                return _TAG + resolve(value)[0]
            return BaseResolver.resolve(self, kind, value, implicit)

    class KubeConstructor(SafeConstructor):
        yaml_constructors = dict(SafeConstructor.yaml_constructors)

        def _typed(self, node, want: tuple):
            tag, value = resolve(self.construct_scalar(node))
            if tag == "int" and "float" in want and _INT64[0] <= value <= _INT64[1]:
                return float(value)  # go-yaml turns an int (not a uint64) into the float the tag asks for
            if tag not in want:
                raise ConstructorError(None, None, f"cannot decode {node.value!r} as a {node.tag}", node.start_mark)
            return value

        refuse_joined = True  # kubeconfig files are read as kubectl reads them: the last repeated key wins

        def construct_document(self, node):
            key = repeated_root_key(node) if self.refuse_joined else None  # outputs joined without `---` (joined.py)
            if key is not None:
                raise ConstructorError(None, None, joined_problem(key.value), key.start_mark)
            return super().construct_document(node)

        def construct_mapping(self, node, deep=False):
            """go-yaml v2's mapping: pairs applied in order, a `<<` merge where it stands (a later key overrides it,
            it overrides an earlier one; of a list of mappings the earlier wins); keys as their JSON text before they
            meet in a dict (1 and true are one key to Python, two to JSON)."""
            if not isinstance(node, yaml.MappingNode):
                raise ConstructorError(None, None, f"expected a mapping node, but found {node.id}", node.start_mark)
            out: dict = {}
            for key_node, value_node in node.value:
                if key_node.tag == _TAG + "merge":
                    subs = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                    for sub in reversed(subs):
                        if not isinstance(sub, yaml.MappingNode):
                            raise ConstructorError(
                                "while constructing a mapping",
                                node.start_mark,
                                "map merge requires map or sequence of maps as the value",
                                sub.start_mark,
                            )
                        out.update(self.construct_mapping(sub, deep=True))
                    continue
                key = self.construct_object(key_node, deep=deep)
                text = key_text(key)
                if text is None:
                    raise ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"unsupported map key {key!r}",
                        key_node.start_mark,
                    )
                out[text] = self.construct_object(value_node, deep=deep)
            return out

    def construct_str(self, node):
        return self.construct_scalar(node)

    KubeConstructor.add_constructor(_TAG + "bool", lambda self, node: self._typed(node, ("bool",)))
    KubeConstructor.add_constructor(_TAG + "int", lambda self, node: self._typed(node, ("int",)))
    KubeConstructor.add_constructor(_TAG + "float", lambda self, node: self._typed(node, ("float",)))
    KubeConstructor.add_constructor(_TAG + "null", lambda self, node: self._typed(node, ("null",)))
    KubeConstructor.add_constructor(_TAG + "timestamp", construct_str)
    KubeConstructor.add_constructor(_TAG + "merge", construct_str)  # `<<` anywhere but a key is its text

    def construct_binary(self, node):
        """go-yaml decodes !!binary into the bytes' string (JSON then replaces what is no UTF-8)."""
        import base64
        import binascii

        try:
            return base64.b64decode(self.construct_scalar(node)).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            raise ConstructorError(None, None, "!!binary value contains invalid base64 data", node.start_mark) from None

    KubeConstructor.add_constructor(_TAG + "binary", construct_binary)

    class KubeLoader(*parsers, KubeConstructor, KubeResolver):
        def __init__(self, stream):
            parsers[0].__init__(self, stream)
            for base in parsers[1:]:
                base.__init__(self)
            KubeConstructor.__init__(self)
            KubeResolver.__init__(self)

    return KubeLoader
