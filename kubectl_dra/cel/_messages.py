"""cel-cpp's compile and runtime messages translated into cel-go's wording (what Kubernetes users see), with
positions mapped back through the source rewriting."""

from __future__ import annotations

import re
from typing import Any

from ._common import NO_SUCH_KEY_HINT, UNRENAME
from .library.regex import go_regex_error

# ------------------------------------------------------------------------------ messages
_STATUS = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r"\s*\[[A-Z_]+\]\s*$")
_KEY_NOT_FOUND = re.compile(r'^Key not found in map : "?(.*?)"?$', re.S)
_CONVERT = re.compile(r"^cannot convert (string|int|uint|double) to (int|uint|double)$")
_INDEX_ERR = re.compile(r"^Index error: index=(-?\d+) size=(\d+)$")


def _clean_status(text: str) -> str:
    text = _STATUS_SUFFIX.sub("", text)
    return _STATUS.sub("", text, count=1)


def runtime_message(raw: str, hint: bool) -> str:
    msg = _clean_status(raw)
    m = _KEY_NOT_FOUND.match(msg)
    if m:
        out = f"no such key: {m.group(1)}"
        return out + NO_SUCH_KEY_HINT if hint else out
    if msg.startswith("No matching overloads found") or msg.startswith("no matching overload"):
        return _no_such_overload(msg)
    m = _INDEX_ERR.match(msg)
    if m:
        return f"index out of bounds: {m.group(1)}"
    if msg.startswith("invalid regular expression: "):
        return go_regex_error(msg, "")
    if msg.startswith("error parsing regexp: "):
        return "Illegal regex: " + msg
    m = _CONVERT.match(msg)
    if m:
        return f"type conversion error from '{m.group(1)}' to '{m.group(2)}'"
    if msg.startswith("sort(): unsupported type") or msg == "sort(): list elements must be comparable":
        return "list elements must be comparable"
    if msg.startswith("sort(): list elements must have the same type"):
        return "list elements must have the same type"
    if msg == "double out of int64 range":
        return "integer overflow"
    if msg == "double out of uint64 range":
        return "unsigned integer overflow"
    if msg in ("divide by zero", "division by zero"):
        return "division by zero"
    if msg in ("modulus by zero", "modulo by zero"):
        return "modulus by zero"
    return msg


# cel-go dispatches operators through type traits: when the (left) operand lacks the trait and is not
# a receiver type (string, duration, timestamp) the error names the function ("no such overload: _>_");
# otherwise the type's own method rejects the call with a bare "no such overload".
_NUM = {"int64", "uint64", "double"}
_TRAITS = {
    "_<_": _NUM | {"string", "bytes", "bool", "google.protobuf.Duration", "google.protobuf.Timestamp"},
    "_+_": _NUM | {"string", "bytes", "list", "google.protobuf.Duration", "google.protobuf.Timestamp"},
    "_-_": _NUM | {"google.protobuf.Duration", "google.protobuf.Timestamp"},
    "_*_": _NUM,
    "_/_": _NUM,
    "_%_": {"int64", "uint64"},
    "size": {"string", "bytes", "list", "map"},
    "-_": {"int64", "double", "google.protobuf.Duration"},
}
# types implementing cel-go's traits.ReceiverType answer a missing operator with a bare error
_RECEIVERS = {"string", "google.protobuf.Duration", "google.protobuf.Timestamp"}
for _op in ("_<=_", "_>_", "_>=_"):
    _TRAITS[_op] = _TRAITS["_<_"]
_OVERLOAD_MSG = re.compile(r"^No matching overloads found : (?:\(([^)]*)\)\.)?([^(\s]+)(?:\(([^)]*)\))?")


def _no_such_overload(msg: str) -> str:
    m = _OVERLOAD_MSG.match(msg)
    if not m:
        return "no such overload"
    receiver, fn, args = m.group(1), m.group(2), m.group(3)
    first = receiver if receiver is not None else (args.split(",")[0].strip() if args else None)
    traits = _TRAITS.get(fn)
    if traits is None:
        return "no such overload"
    if first is None or first in traits or first in _RECEIVERS:
        return "no such overload"
    return f"no such overload: {fn}"


EMPTY_SYNTAX_ERROR = (
    "ERROR: <input>:1:0: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', "
    "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"
)
_ISSUE = re.compile(r"^ERROR: <input>:(-?\d+):(-?\d+): (.*)$")
_UNDECLARED = re.compile(r"^undeclared reference to '([A-Za-z_][\w.]*)' \(in container ''\)$")
_NO_OVERLOAD = re.compile(r"^found no matching overload for '([^']+)' applied to '\((.*)\)'$")


def _split_types(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def source_offset(src: str, line: int, col: int) -> int:
    starts = [0] + [i + 1 for i, c in enumerate(src) if c == "\n"]
    if line < 1 or line > len(starts):
        return -1
    return starts[line - 1] + col - 1


def apply_inserts(src: str, inserts: list[tuple[int, str]]) -> str:
    out, last = [], 0
    for pos, text in sorted(inserts, key=lambda x: x[0]):
        out.append(src[last:pos])
        out.append(text)
        last = pos
    out.append(src[last:])
    return "".join(out)


def to_original(cur: int, inserts: list[tuple[int, str]]) -> int:
    """Offset in the rewritten source -> offset in the original (inside an insertion: its position)."""
    shift = 0
    for pos, text in sorted(inserts, key=lambda x: x[0]):
        start = pos + shift
        if cur >= start + len(text):
            shift += len(text)
        elif cur >= start:
            return pos
        else:
            break
    return cur - shift


def remap_issues(text: str, cur_src: str, orig_src: str, inserts: list[tuple[int, str]]) -> str:
    from ._checks import format_issue

    out = []
    for block in re.split(r"\n(?=ERROR: )", text):
        m = _ISSUE.match(block.split("\n", 1)[0])
        if not m:
            out.append((-1, block))
            continue
        o = to_original(source_offset(cur_src, int(m.group(1)), int(m.group(2))), inserts)
        out.append((o, format_issue(orig_src, o, m.group(3))))
    out.sort(key=lambda x: x[0])
    return "\n".join(b for _, b in out)


def _parsed_attribute_value(n) -> bool:
    """On the *parsed* AST: device.attributes[d].x / [d][x] / [d].?x.orValue(..) (cel-go AnyType)."""

    def is_domain(d) -> bool:
        return (
            d is not None
            and d.kind == "call"
            and d.value in ("_[_]", "_[?_]")
            and d.args
            and d.args[0].kind == "select"
            and d.args[0].value == "attributes"
            and d.args[0].operand is not None
            and d.args[0].operand.kind == "ident"
            and d.args[0].operand.value == "device"
        )

    if n.kind == "select" and not n.test_only:
        return is_domain(n.operand)
    if n.kind == "call" and n.value == "_[_]" and n.args:
        return is_domain(n.args[0])
    if (
        n.kind == "call"
        and n.value == "orValue"
        and n.operand is not None
        and n.operand.kind == "call"
        and n.operand.value == "_?._"
        and n.operand.args
    ):
        return is_domain(n.operand.args[0])
    if n.kind == "call" and n.value == "_?_:_" and len(n.args) == 3:
        return _parsed_attribute_value(n.args[1]) or _parsed_attribute_value(n.args[2])
    return False


# long: one case per cel-cpp compile error and the cel-go text it becomes
def compile_message(
    raw: str,
    src: str | None = None,
    engine=None,
    any_attributes: bool = False,
    extra: list[tuple[int, str]] | None = None,
) -> str:
    """cel-cpp issues in cel-go's wording (receiver-style overload lists, `device` field errors,
    identifier positions, logical operators, null/any type names, issues sorted by position),
    with renamed stand-ins mapped back."""
    from ._checks import format_issue

    msg = _clean_status(raw).rstrip()
    for stand_in, name in UNRENAME.items():
        msg = msg.replace(stand_in, name)
    if src is not None:
        for stand_in, name in UNRENAME.items():
            src = src.replace(stand_in, name)
    blocks: list[list[str]] = []
    for line in msg.split("\n"):
        if line.startswith("ERROR: ") or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    calls = None
    if (
        src is not None
        and engine is not None
        and any(
            _NO_OVERLOAD.match((_ISSUE.match(b[0]) or [None, "", "", ""])[3] or "")
            for b in blocks
            if _ISSUE.match(b[0])
        )
    ):
        try:
            from ._ast import decode_serialized

            parsed = decode_serialized(engine.compile(src, disable_check=True).serialize())
            calls = {}
            stack = [parsed.expr]
            while stack:
                n = stack.pop()
                stack.extend(n.children())
                if n.kind == "call":
                    calls.setdefault(parsed.positions.get(n.id), n)
            positions = parsed.positions
        except Exception:  # best effort wording only
            calls = None
    out: list[tuple[int, str]] = []
    for block in blocks:
        m = _ISSUE.match(block[0])
        if not m or src is None:
            out.append((-1, "\n".join(block)))
            continue
        off = source_offset(src, int(m.group(1)), int(m.group(2)))
        text = m.group(3)
        u = _UNDECLARED.match(text)
        o = _NO_OVERLOAD.match(text)
        if u and "." in u.group(1):
            # `device` is declared as qualified variables (device.driver, ...), so cel-cpp reports the
            # dotted name; cel-go reports the field of the object-typed variable / the first identifier.
            name = u.group(1)
            if name.startswith("device."):
                out.append((off, format_issue(src, off, f"undefined field '{name.split('.', 2)[1]}'")))
            else:
                start = off
                while start > 0 and (src[start - 1].isalnum() or src[start - 1] in "_."):
                    start -= 1
                out.append(
                    (
                        start,
                        format_issue(
                            src, start, f"undeclared reference to '{name.split('.', 1)[0]}' (in container '')"
                        ),
                    )
                )
            continue
        if o:
            fn, types = o.group(1), _split_types(o.group(2))
            node = calls.get(off) if calls is not None else None
            operands = ([node.operand] if node is not None and node.operand is not None else []) + (
                list(node.args) if node is not None else []
            )
            if fn in ("_&&_", "_||_") and node is not None and len(operands) == len(types):
                # cel-go checks logical operators operand by operand
                for t, operand in zip(types, operands):
                    if t not in ("bool", "dyn", "*error*"):
                        p = positions.get(operand.id, off)
                        out.append(
                            (
                                p,
                                format_issue(
                                    src, p, f"expected type 'bool' but found '{t.replace('null_type', 'null')}'"
                                ),
                            )
                        )
                continue
            if node is not None and len(operands) == len(types):
                types = [
                    ("any" if (t == "dyn" and any_attributes and _parsed_attribute_value(op)) else t)
                    for t, op in zip(types, operands)
                ]
            types = [
                re.sub(r"\b[A-Z]%\d+\b", "dyn", t.replace("null_type", "null").replace("*error*", "!error!"))
                for t in types
            ]
            member = False
            if 0 <= off < len(src) and src[off] == "(":
                k = off
                while k > 0 and (src[k - 1].isalnum() or src[k - 1] == "_"):
                    k -= 1
                j = k - 1
                while j >= 0 and src[j].isspace():
                    j -= 1
                member = j >= 0 and src[j] == "."
            if member and types:
                text = f"found no matching overload for '{fn}' applied to '{types[0]}.({', '.join(types[1:])})'"
            else:
                text = f"found no matching overload for '{fn}' applied to '({', '.join(types)})'"
            out.append((off, format_issue(src, off, text)))
            continue
        out.append((off, "\n".join(block)))
    seen = {off for off, _ in out}
    out += [(off, text) for off, text in extra or () if off not in seen]
    out.sort(key=lambda x: x[0])
    return "\n".join(text for _, text in out)


_CELGO_TYPE = {
    "BOOL": "bool",
    "INT": "int",
    "UINT": "uint",
    "DOUBLE": "double",
    "STRING": "string",
    "BYTES": "bytes",
    "NULL": "null_type",
    "DYN": "dyn",
    "TIMESTAMP": "google.protobuf.Timestamp",
    "DURATION": "google.protobuf.Duration",
    "TYPE": "type",
    "ERROR": "*error*",
}


def celgo_type_name(name: str) -> str:
    """cel-expr-python type names (LIST<INT>, MAP<STRING, DYN>) in cel-go's spelling (list(int))."""
    out, word = [], ""
    for ch in name:
        if ch.isalnum() or ch in "._":
            word += ch
            continue
        if word:
            out.append(_word(word))
            word = ""
        out.append({"<": "(", ">": ")"}.get(ch, ch))
    if word:
        out.append(_word(word))
    return "".join(out)


def _word(w: str) -> str:
    if w in ("LIST", "MAP"):
        return w.lower()
    return _CELGO_TYPE.get(w, w)


def bool_conversion_error(tn: str) -> str:
    """cel-go's ConvertToNative(bool) error per value type (checked against upstream)."""
    if tn == "string":
        return "unsupported native conversion from string to 'bool'"
    if tn in ("list", "map"):
        return f"type conversion error from {tn} to 'bool'"
    if tn.startswith("kubernetes."):
        return f"type conversion error from '{tn.split('.', 1)[1]}' to 'bool'"
    if tn in ("double", "bytes"):
        return f"type conversion error from {tn.capitalize()} to 'bool'"
    if tn == "null_type":
        return "type conversion error from 'null_type' to 'bool'"
    return f"unsupported type conversion from '{tn}' to bool"


def result_type_name(value: Any) -> str:
    t = value.type().name()
    base = t.split("<", 1)[0]
    return {"LIST": "list", "MAP": "map"}.get(base, _CELGO_TYPE.get(base, base))
