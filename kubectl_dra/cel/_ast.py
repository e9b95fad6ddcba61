"""Decode the checked AST that cel-cpp hands out through ``Expression.serialize()``.

``serialize()`` returns a ``google.protobuf.Any`` holding a ``cel.expr.CheckedExpr`` (or a
``cel.expr.ParsedExpr`` when checking was disabled).  The cel.expr protos are not shipped as
Python modules, so this is a tiny protobuf wire-format reader that knows the field numbers of
``cel/expr/syntax.proto`` and ``cel/expr/checked.proto``.  It is pure Python, iterative where
nesting can be deep, and only used once per compiled expression.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """Split one message into (field number, wire type, raw value)."""
    out = []
    pos = 0
    n = len(buf)
    while pos < n:
        key, pos = _varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            val, pos = _varint(buf, pos)
        elif wt == 1:
            val = buf[pos : pos + 8]
            pos += 8
        elif wt == 2:
            ln, pos = _varint(buf, pos)
            val = buf[pos : pos + ln]
            pos += ln
        elif wt == 5:
            val = buf[pos : pos + 4]
            pos += 4
        else:  # groups are not used by cel.expr
            raise ValueError(f"unsupported wire type {wt}")
        out.append((num, wt, val))
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


@dataclass(eq=False, slots=True)
class Node:
    """One CEL expression node.

    kind: "const" | "ident" | "select" | "call" | "list" | "map" | "struct" | "comprehension".
    """

    id: int
    kind: str
    value: Any = None  # const value; ident name; select field; call function; struct message name
    const_type: str = ""  # const: "null" | "bool" | "int" | "uint" | "double" | "string" | "bytes"
    operand: Node | None = None  # select operand / call target
    test_only: bool = False  # select: has() form
    args: list[Node] = field(default_factory=list)  # call args / list elements
    entries: list[tuple[Node | str, Node, bool]] = field(default_factory=list)  # map/struct (key, value, optional)
    # comprehension parts
    iter_var: str = ""
    iter_var2: str = ""
    accu_var: str = ""
    iter_range: Node | None = None
    accu_init: Node | None = None
    loop_condition: Node | None = None
    loop_step: Node | None = None
    result: Node | None = None

    def children(self) -> list[Node]:
        out: list[Node] = []
        if self.operand is not None:
            out.append(self.operand)
        out.extend(self.args)
        for k, v, _ in self.entries:
            if isinstance(k, Node):
                out.append(k)
            out.append(v)
        for c in (self.iter_range, self.accu_init, self.loop_condition, self.loop_step, self.result):
            if c is not None:
                out.append(c)
        return out


def _const(buf: bytes, node: Node) -> None:
    for num, wt, val in _fields(buf):
        if num == 1:
            node.const_type, node.value = "null", None
        elif num == 2:
            node.const_type, node.value = "bool", bool(val)
        elif num == 3:
            node.const_type, node.value = "int", _signed(val)
        elif num == 4:
            node.const_type, node.value = "uint", val
        elif num == 5:
            node.const_type, node.value = "double", struct.unpack("<d", val)[0]
        elif num == 6:
            node.const_type, node.value = "string", val.decode("utf-8", "surrogatepass")
        elif num == 7:
            node.const_type, node.value = "bytes", bytes(val)
        else:
            node.const_type, node.value = "other", None


# long: one case per protobuf Expr kind
def decode_expr(buf: bytes) -> Node:
    """Decode a cel.expr.Expr without Python recursion (ASTs may be hundreds of levels deep)."""
    root = Node(0, "unset")
    stack: list[tuple[bytes, Node]] = [(buf, root)]
    while stack:
        data, node = stack.pop()
        for num, wt, val in _fields(data):
            if num == 2 and wt == 0:
                node.id = val
            elif num == 3:
                node.kind = "const"
                _const(val, node)
            elif num == 4:
                node.kind = "ident"
                for n2, _, v2 in _fields(val):
                    if n2 == 1:
                        node.value = v2.decode()
            elif num == 5:
                node.kind = "select"
                for n2, _, v2 in _fields(val):
                    if n2 == 1:
                        node.operand = Node(0, "unset")
                        stack.append((v2, node.operand))
                    elif n2 == 2:
                        node.value = v2.decode()
                    elif n2 == 3:
                        node.test_only = bool(v2)
            elif num == 6:
                node.kind = "call"
                for n2, _, v2 in _fields(val):
                    if n2 == 1:
                        node.operand = Node(0, "unset")
                        stack.append((v2, node.operand))
                    elif n2 == 2:
                        node.value = v2.decode()
                    elif n2 == 3:
                        child = Node(0, "unset")
                        node.args.append(child)
                        stack.append((v2, child))
            elif num == 7:
                node.kind = "list"
                for n2, _, v2 in _fields(val):
                    if n2 == 1:
                        child = Node(0, "unset")
                        node.args.append(child)
                        stack.append((v2, child))
            elif num == 8:
                node.kind = "map"
                for n2, _, v2 in _fields(val):
                    if n2 == 1:
                        node.kind = "struct"
                        node.value = v2.decode()
                    elif n2 == 2:
                        key: Node | str = ""
                        value = Node(0, "unset")
                        optional = False
                        for n3, _, v3 in _fields(v2):
                            if n3 == 2:
                                key = v3.decode()
                            elif n3 == 3:
                                key = Node(0, "unset")
                                stack.append((v3, key))
                            elif n3 == 4:
                                stack.append((v3, value))
                            elif n3 == 5:
                                optional = bool(v3)
                        node.entries.append((key, value, optional))
            elif num == 9:
                node.kind = "comprehension"
                for n2, _, v2 in _fields(val):
                    if n2 == 1:
                        node.iter_var = v2.decode()
                    elif n2 == 8:
                        node.iter_var2 = v2.decode()
                    elif n2 == 3:
                        node.accu_var = v2.decode()
                    elif n2 in (2, 4, 5, 6, 7):
                        child = Node(0, "unset")
                        attr = {2: "iter_range", 4: "accu_init", 5: "loop_condition", 6: "loop_step", 7: "result"}[n2]
                        setattr(node, attr, child)
                        stack.append((v2, child))
    return root


@dataclass(slots=True)
class CheckedAst:
    expr: Node
    positions: dict[int, int]  # expr id -> code point offset
    references: dict[int, tuple[str, list[str]]]  # expr id -> (name, overload ids)
    types: dict[int, bytes]  # expr id -> serialized cel.expr.Type (decoded lazily)
    macro_calls: dict[int, Node]


def _map_entries(buf: bytes) -> tuple[int, bytes]:
    k, v = 0, b""
    for num, wt, val in _fields(buf):
        if num == 1:
            k = _signed(val) if wt == 0 else val
        elif num == 2:
            v = val
    return k, v


def decode_serialized(blob: bytes) -> CheckedAst:
    """Decode the bytes of ``Expression.serialize()`` (an Any of CheckedExpr or ParsedExpr)."""
    type_url, payload = "", b""
    for num, _, val in _fields(blob):
        if num == 1:
            type_url = val.decode()
        elif num == 2:
            payload = val
    checked = type_url.endswith("CheckedExpr")
    expr_buf, source_info = b"", b""
    references: dict[int, tuple[str, list[str]]] = {}
    types: dict[int, bytes] = {}
    for num, _, val in _fields(payload):
        if checked:
            if num == 4:
                expr_buf = val
            elif num == 5:
                source_info = val
            elif num == 2:
                k, v = _map_entries(val)
                name, overloads = "", []
                for n2, _, v2 in _fields(v):
                    if n2 == 1:
                        name = v2.decode()
                    elif n2 == 3:
                        overloads.append(v2.decode())
                references[k] = (name, overloads)
            elif num == 3:
                k, v = _map_entries(val)
                types[k] = v
        else:
            if num == 2:
                expr_buf = val
            elif num == 3:
                source_info = val
    positions: dict[int, int] = {}
    macro_calls: dict[int, Node] = {}
    for num, _, val in _fields(source_info):
        if num == 4:
            k, v = _map_entries(val)
            positions[k] = v if isinstance(v, int) else 0
        elif num == 5:
            k, v = _map_entries(val)
            macro_calls[k] = decode_expr(v)
    return CheckedAst(decode_expr(expr_buf), positions, references, types, macro_calls)


def decode_type(buf: bytes) -> tuple:
    """A serialized cel.expr.Type as a small tuple: ("dyn",), ("prim", "int"), ("list", T),
    ("map", K, V), ("msg", name), ("null",), ("type", T|None), ("abstract", name, (T, ...)),
    ("wkt", name), ("wrapper", prim), ("error",), ("param", name), ("fn",)."""
    prims = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
    for num, wt, val in _fields(buf):
        if num == 1:
            return ("dyn",)
        if num == 2:
            return ("null",)
        if num == 3:
            return ("prim", prims.get(val, "?"))
        if num == 4:
            return ("wrapper", prims.get(val, "?"))
        if num == 5:
            return ("wkt", {1: "any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}.get(val, "?"))
        if num == 6:
            for n2, _, v2 in _fields(val):
                if n2 == 1:
                    return ("list", decode_type(v2))
            return ("list", ("dyn",))
        if num == 7:
            k: tuple = ("dyn",)
            v: tuple = ("dyn",)
            for n2, _, v2 in _fields(val):
                if n2 == 1:
                    k = decode_type(v2)
                elif n2 == 2:
                    v = decode_type(v2)
            return ("map", k, v)
        if num == 8:
            return ("fn",)
        if num == 9:
            return ("msg", val.decode())
        if num == 10:
            return ("param", val.decode())
        if num == 11:
            return ("type", decode_type(val) if val else None)
        if num == 12:
            return ("error",)
        if num == 14:
            name, params = "", []
            for n2, _, v2 in _fields(val):
                if n2 == 1:
                    name = v2.decode()
                elif n2 == 2:
                    params.append(decode_type(v2))
            return ("abstract", name, tuple(params))
    return ("dyn",)


def format_type(t: tuple | None) -> str:
    """cel-go's Type.String() spelling."""
    if t is None:
        return "type"
    k = t[0]
    if k == "dyn":
        return "dyn"
    if k == "null":
        return "null_type"
    if k == "prim":
        return t[1]
    if k == "wrapper":
        return f"wrapper({t[1]})"
    if k == "wkt":
        return t[1]
    if k == "list":
        return f"list({format_type(t[1])})"
    if k == "map":
        return f"map({format_type(t[1])}, {format_type(t[2])})"
    if k == "msg":
        return t[1]
    if k == "param":
        return t[1]
    if k == "type":
        return f"type({format_type(t[1])})" if t[1] is not None else "type"
    if k == "abstract":
        return f"{t[1]}({', '.join(format_type(p) for p in t[2])})" if t[2] else t[1]
    return k


def assignable(a: tuple, b: tuple) -> bool:
    """Loose cel-go isAssignable for literal homogeneity: equal up to dyn/type-param wildcards."""
    if a[0] in ("dyn", "param", "error") or b[0] in ("dyn", "param", "error"):
        return True
    if a[0] != b[0]:
        # null is assignable to wrappers/messages/abstract types in cel-go
        if "null" in (a[0], b[0]) and {a[0], b[0]} & {"msg", "wrapper", "wkt", "abstract"}:
            return True
        return False
    if a[0] == "list":
        return assignable(a[1], b[1])
    if a[0] == "map":
        return assignable(a[1], b[1]) and assignable(a[2], b[2])
    if a[0] == "abstract":
        return a[1] == b[1] and len(a[2]) == len(b[2]) and all(assignable(x, y) for x, y in zip(a[2], b[2]))
    if a[0] == "type":
        return True
    return a[1:] == b[1:]
