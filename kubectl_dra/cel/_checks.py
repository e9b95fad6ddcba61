"""Compile-time checks that cel-go (as configured by Kubernetes) performs but cel-cpp does not,
applied to cel-cpp's checked AST.  Each returns (offset, message) problems in cel-go wording."""

from __future__ import annotations

from typing import Callable

from ._ast import CheckedAst, Node, decode_type, format_type
from ._common import HIDDEN_MEMBER, UNRENAME, CelCompileError
from .library.regex import validate_re2

ATTR = "device.attributes"


def _walk(root: Node):
    stack = [root]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children())


def type_of(ast: CheckedAst, node: Node) -> tuple:
    buf = ast.types.get(node.id)
    return decode_type(buf) if buf is not None else ("dyn",)


def hidden_member_calls(ast: CheckedAst, attributes_are_any: bool = False) -> list[tuple[int, str]]:
    out = []

    def tname(node: Node) -> str:
        if attributes_are_any and attribute_derived(node):
            return "any"
        return format_type(type_of(ast, node))

    for n in _walk(ast.expr):
        if n.kind != "call":
            continue
        ref = ast.references.get(n.id)
        if not ref or not any(o.startswith(HIDDEN_MEMBER) for o in ref[1]):
            continue
        recv = tname(n.operand) if n.operand is not None else "dyn"
        args = ", ".join(tname(a) for a in n.args)
        out.append(
            (ast.positions.get(n.id, 0), f"found no matching overload for '{n.value}' applied to '{recv}.({args})'")
        )
    return out


def homogeneous_literals(ast: CheckedAst, attributes_are_any: bool = False) -> list[tuple[int, str]]:
    """cel-go's homogeneous aggregate literal validator: list elements (and map keys, and map
    values) must have exactly equivalent types; the list argument of format() is exempt."""
    exempt: set[int] = set()
    for n in _walk(ast.expr):
        if n.kind == "call" and n.value == "format" and n.args and n.args[0].kind == "list":
            exempt.add(id(n.args[0]))
    out = []
    for n in _walk(ast.expr):
        if n.kind == "list" and id(n) not in exempt:
            groups = [n.args]
        elif n.kind == "map":
            groups = [[k for k, _, _ in n.entries if isinstance(k, Node)], [v for _, v, _ in n.entries]]
        else:
            continue
        for group in groups:
            first = None
            for elem in group:
                t = ("wkt", "any") if attributes_are_any and attribute_derived(elem) else type_of(ast, elem)
                if first is None:
                    first = t
                    continue
                if t != first and not _optional_of(t, first) and not _optional_of(first, t):
                    out.append(
                        (
                            ast.positions.get(elem.id, 0),
                            f"expected type '{format_type(first)}' but found '{format_type(t)}'",
                        )
                    )
                    break
            else:
                continue
            break
    return out


def _optional_of(a: tuple, b: tuple) -> bool:
    return a[0] == "abstract" and a[1] == "optional_type" and bool(a[2]) and a[2][0] == b


def _is_attribute_value(node: Node) -> bool:
    """device.attributes[<d>].<id> / [<id>] / .?<id> (a value of the attribute type)."""

    def is_domain(n: Node | None) -> bool:
        return (
            n is not None
            and n.kind == "call"
            and n.value in ("_[_]", "_[?_]")
            and n.args
            and n.args[0].kind == "ident"
            and n.args[0].value == ATTR
        )

    if node.kind == "select" and not node.test_only:
        return is_domain(node.operand)
    if node.kind == "call" and node.value == "_[_]" and node.args:
        return is_domain(node.args[0])
    return False


def any_typed_ranges(ast: CheckedAst) -> list[tuple[int, str]]:
    """Without list attributes, attribute values have cel-go's AnyType, which cannot be iterated."""
    out = []
    any_vars: set[str] = set()
    for n in _walk(ast.expr):
        if n.kind != "comprehension" or n.iter_range is None:
            continue
        rng = n.iter_range
        if rng.kind == "list" and not rng.args and n.accu_init is not None and _is_attribute_value(n.accu_init):
            any_vars.add(n.accu_var)  # cel.bind(x, <attribute value>, ...)
            continue
        if _is_attribute_value(rng) or (rng.kind == "ident" and rng.value in any_vars):
            out.append(
                (
                    ast.positions.get(rng.id, 0),
                    "expression of type 'any' cannot be range of a comprehension (must be list, map, or dynamic)",
                )
            )
    return out


def constant_regexes(ast: CheckedAst, validate: Callable[[str], str | None]) -> tuple[list, list]:
    """Literal patterns: matches() is checked by the AST validator ("invalid matches argument");
    find/findAll patterns are precompiled when the program is built ("program instantiation failed")."""
    issues, instantiation = [], []
    for n in _walk(ast.expr):
        if n.kind != "call" or n.value not in ("matches", "find", "findAll"):
            continue
        args = n.args
        pat = None
        if n.operand is not None and args:
            pat = args[0]
        elif n.operand is None and n.value == "matches" and len(args) == 2:
            pat = args[1]
            # only the receiver form is checked by the AST validator; the global form is
            # precompiled like find/findAll
            if pat.kind == "const" and pat.const_type == "string":
                err = validate(pat.value)
                if err:
                    instantiation.append(f"program instantiation failed: {err}")
            continue
        if pat is None or pat.kind != "const" or pat.const_type != "string":
            continue
        err = validate(pat.value)
        if not err:
            continue
        if n.value == "matches":
            issues.append((ast.positions.get(pat.id, 0), "invalid matches argument"))
        else:
            instantiation.append(f"program instantiation failed: {err}")
    return issues, instantiation


def constant_conversions(ast: CheckedAst) -> list[str]:
    """int("x") and friends on literals are evaluated when cel-go builds the program."""
    out = []
    for n in _walk(ast.expr):
        arg0 = n.args[0] if n.kind == "call" and len(n.args) == 1 else None
        while arg0 is not None and arg0.kind == "call" and arg0.value == "dyn" and len(arg0.args) == 1:
            arg0 = arg0.args[0]  # cel-go folds dyn(<literal>) too
        if (
            n.kind == "call"
            and n.operand is None
            and n.value in ("int", "uint")
            and arg0 is not None
            and arg0.kind == "const"
            and arg0.const_type == "double"
        ):
            v = arg0.value
            lo, hi = (-(2**63), 2**63) if n.value == "int" else (0, 2**64)
            if not (v == v and lo <= v < hi) or (n.value == "int" and v <= -(2**63)):
                out.append(
                    "program instantiation failed: "
                    + ("integer overflow" if n.value == "int" else "unsigned integer overflow")
                )
            continue
        if n.kind == "call" and n.operand is None and n.value in ("int", "uint", "double") and arg0 is not None:
            a = arg0
            if a.kind == "const" and a.const_type == "string":
                text = a.value
                try:
                    if n.value == "double":
                        float(text)
                    else:
                        v = int(text, 10)
                        if n.value == "uint" and v < 0:
                            raise ValueError
                    continue
                except ValueError:
                    out.append(f"program instantiation failed: type conversion error from 'string' to '{n.value}'")
    return out


def range_attributes(ast: CheckedAst) -> list[tuple[str, str]]:
    """(domain, id) of attribute values used directly (or via cel.bind) as comprehension ranges."""
    out: list[tuple[str, str]] = []
    bound: dict[str, Node] = {}
    for n in _walk(ast.expr):
        if n.kind != "comprehension" or n.iter_range is None:
            continue
        rng = n.iter_range
        if rng.kind == "list" and not rng.args and n.accu_init is not None and _is_attribute_value(n.accu_init):
            bound[n.accu_var] = n.accu_init
            continue
        node = bound.get(rng.value) if rng.kind == "ident" else rng
        if node is None or not _is_attribute_value(node):
            continue
        dom = node.operand if node.kind == "select" else node.args[0]
        d = dom.args[1]
        if d.kind != "const" or d.const_type != "string":
            continue
        ident = (
            node.value
            if node.kind == "select"
            else (node.args[1].value if node.args[1].kind == "const" and node.args[1].const_type == "string" else None)
        )
        if ident is not None:
            out.append((d.value, ident))
    return out


def attribute_derived(node: Node) -> bool:
    """Whether an expression has cel-go's AnyType (an attribute value) rather than dyn."""
    if _is_attribute_value(node):
        return True
    if (
        node.kind == "call"
        and node.value == "orValue"
        and node.operand is not None
        and node.operand.kind == "call"
        and node.operand.value == "_?._"
        and node.operand.args
    ):
        d = node.operand.args[0]
        return (
            d.kind == "call"
            and d.value in ("_[_]", "_[?_]")
            and bool(d.args)
            and d.args[0].kind == "ident"
            and d.args[0].value == ATTR
        )
    if node.kind == "call" and node.value == "_?_:_" and len(node.args) == 3:
        return attribute_derived(node.args[1]) or attribute_derived(node.args[2])
    return False


def format_issue(src: str, offset: int, message: str) -> str:
    """ERROR: <input>:L:C: msg + source line + caret, like cel-go's Issues.String()."""
    line_start = src.rfind("\n", 0, offset) + 1 if offset > 0 else 0
    line_no = src.count("\n", 0, offset) + 1
    col = offset - line_start
    line_end = src.find("\n", offset)
    text = src[line_start : line_end if line_end != -1 else len(src)]
    return f"ERROR: <input>:{line_no}:{col + 1}: {message}\n | {text}\n | {'.' * col}^"


# ------------------------------------------------------------------ string.format literal validator
_FMT_STRING = (
    "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, "
    "durations, and timestamps, was given %s"
)
_FMT = {
    "d": (("int", "uint"), "decimal clause can only be used on integers, was given %s"),
    "f": (("double", "string"), "fixed-point clause can only be used on doubles, was given %s"),
    "e": (("double", "string"), "scientific clause can only be used on doubles, was given %s"),
    "b": (("int", "uint", "bool"), "only integers and bools can be formatted as binary, was given %s"),
    "x": (
        ("int", "uint", "string", "bytes"),
        "only integers, byte buffers, and strings can be formatted as hex, was given %s",
    ),
    "X": (
        ("int", "uint", "string", "bytes"),
        "only integers, byte buffers, and strings can be formatted as hex, was given %s",
    ),
    "o": (("int", "uint"), "octal clause can only be used on integers, was given %s"),
}
_STRING_KINDS = (
    "list",
    "map",
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "google.protobuf.Timestamp",
    "bytes",
    "google.protobuf.Duration",
    "type",
    "null_type",
)


def _kind_name(t: tuple) -> str:
    """cel-go Type.TypeName() (kind-level name)."""
    k = t[0]
    if k == "prim":
        return t[1]
    if k in ("list", "map"):
        return k
    if k == "null":
        return "null_type"
    if k == "wkt":
        return "google.protobuf.Any" if t[1] == "any" else t[1]
    if k == "msg":
        return t[1]
    if k == "type":
        return "type"
    if k == "abstract":
        return t[1]
    return k


# long: mirrors the format-string literal checks of cel-go's strings extension
def format_literals(ast: CheckedAst, attributes_are_any: bool) -> list[tuple[int, str]]:
    """cel-go's string.format validator for literal format strings with list-literal arguments."""
    out: list[tuple[int, str]] = []

    def tname(node: Node) -> str | None:
        if attributes_are_any and attribute_derived(node):
            return "google.protobuf.Any"
        t = type_of(ast, node)
        return None if t[0] == "dyn" else _kind_name(t)

    def verify_string(node: Node) -> Node | None:
        name = tname(node)
        if name is not None and name not in _STRING_KINDS:
            return node
        if node.kind == "list":
            for e in node.args:
                bad = verify_string(e)
                if bad is not None:
                    return bad
        elif node.kind == "map":
            for k, v, _ in node.entries:
                for sub in ((k,) if isinstance(k, Node) else ()) + (v,):
                    bad = verify_string(sub)
                    if bad is not None:
                        return bad
        return None

    for n in _walk(ast.expr):
        if n.kind != "call" or n.value != "format" or n.operand is None or len(n.args) != 1:
            continue
        tgt, lst = n.operand, n.args[0]
        if tgt.kind != "const" or tgt.const_type != "string" or lst.kind != "list":
            continue
        fmt, args = tgt.value, lst.args
        call_pos = ast.positions.get(n.id, 0)
        i = arg_index = 0
        problem = None
        while i < len(fmt) and problem is None:
            if fmt[i] != "%":
                i += 1
                continue
            if i + 1 < len(fmt) and fmt[i + 1] == "%":
                i += 2
                continue
            if i + 1 >= len(fmt):
                problem = (call_pos, "unexpected end of string")
                break
            if arg_index >= len(args):
                problem = (call_pos, f"index {arg_index} out of range")
                break
            j = i + 1
            if fmt[j] == ".":
                j += 1
                while j < len(fmt) and fmt[j].isdigit() and fmt[j].isascii():
                    j += 1
                if j >= len(fmt):
                    problem = (
                        call_pos,
                        "could not parse formatting clause: error while parsing precision: "
                        "could not find end of precision specifier",
                    )
                    break
            clause = fmt[j]
            arg = args[arg_index]
            if clause == "s":
                bad = verify_string(arg)
                if bad is not None:
                    problem = (ast.positions.get(bad.id, 0), "error during formatting: " + _FMT_STRING % tname(bad))
            elif clause in _FMT:
                allowed, msg = _FMT[clause]
                name = tname(arg)
                if name is not None and name not in allowed:
                    problem = (ast.positions.get(arg.id, 0), "error during formatting: " + msg % name)
            else:
                problem = (call_pos, f'could not parse formatting clause: unrecognized formatting clause "{clause}"')
            i = j + 1
            arg_index += 1
        if problem is None and len(args) > arg_index:
            problem = (
                call_pos,
                f"too many arguments supplied to string.format (expected {arg_index}, got {len(args)})",
            )
        if problem is not None:
            out.append(problem)
    return out


def type_identifiers(ast: CheckedAst, src: str) -> list[tuple[int, str]]:
    """The Kubernetes types are not addressable by name in cel-go's environment."""
    out = []
    for n in _walk(ast.expr):
        if n.kind == "ident" and n.value.startswith("kubernetes."):
            pos = ast.positions.get(n.id, 0)
            while pos > 0 and (src[pos - 1].isalnum() or src[pos - 1] in "_."):
                pos -= 1
            out.append((pos, "undeclared reference to 'kubernetes' (in container '')"))
    return out


def flatten_calls(ast: CheckedAst) -> list[tuple[int, str]]:
    """cel-go declares flatten() only for list(list(T)); cel-cpp also accepts list(int)."""
    out = []
    for n in _walk(ast.expr):
        if n.kind == "call" and n.value == "flatten" and n.operand is not None and not n.args:
            t = type_of(ast, n.operand)
            if t[0] == "list" and t[1][0] not in ("list", "dyn", "param", "error"):
                out.append(
                    (
                        ast.positions.get(n.id, 0),
                        f"found no matching overload for 'flatten' applied to '{format_type(t)}.()'",
                    )
                )
    return out


def static_checks(ast, src: str, list_attributes: bool) -> None:
    """cel-go's compile-time checks that cel-cpp does not make; raises CelCompileError."""
    for n in _walk(ast.expr):
        if n.kind == "call" and n.value == "cel.@mapInsert":
            raise CelCompileError(
                "kubectl-dra: transformMap()/transformMapEntry() is not supported by the local "
                "CEL engine (cel-cpp); Kubernetes accepts this expression",
                exact=False,
            )
    any_attrs = not list_attributes
    # Type-checker errors of cel-go first; its AST validators (homogeneous literals, format strings,
    # regex literals) only run on an expression that type-checked, so their errors are reported
    # only when there is no checker error.
    problems = hidden_member_calls(ast, any_attrs) + type_identifiers(ast, src) + flatten_calls(ast)
    if not list_attributes:
        problems += any_typed_ranges(ast)
    regex_issues, instantiation = constant_regexes(ast, validate_re2)
    if not problems:
        problems = homogeneous_literals(ast, any_attrs) + format_literals(ast, any_attrs) + regex_issues
    if problems:
        problems.sort()
        text = "\n".join(format_issue(src, off, msg) for off, msg in problems)
        for stand_in, name in UNRENAME.items():
            text = text.replace(stand_in, name)
        raise CelCompileError("compilation failed: " + text)
    instantiation += constant_conversions(ast)
    if instantiation:
        raise CelCompileError(instantiation[0])
