"""Compile-time checks that cel-go (as configured by Kubernetes) performs but cel-cpp does not,
applied to cel-cpp's checked AST.  Each returns (offset, message) problems in cel-go wording."""

from __future__ import annotations

from typing import Callable

from ._ast import CheckedAst, Node, assignable, decode_type, format_type

HIDDEN_MEMBER = "k8s_hidden_member_"
ATTR = "device.attributes"


def _walk(root: Node):
    stack = [root]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children())


def _type(ast: CheckedAst, node: Node) -> tuple:
    buf = ast.types.get(node.id)
    return decode_type(buf) if buf is not None else ("dyn",)


def hidden_member_calls(ast: CheckedAst) -> list[tuple[int, str]]:
    out = []
    for n in _walk(ast.expr):
        if n.kind != "call":
            continue
        ref = ast.references.get(n.id)
        if not ref or not any(o.startswith(HIDDEN_MEMBER) for o in ref[1]):
            continue
        recv = format_type(_type(ast, n.operand)) if n.operand is not None else "dyn"
        args = ", ".join(format_type(_type(ast, a)) for a in n.args)
        out.append((ast.positions.get(n.id, 0),
                    f"found no matching overload for '{n.value}' applied to '{recv}.({args})'"))
    return out


def homogeneous_literals(ast: CheckedAst) -> list[tuple[int, str]]:
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
                t = _type(ast, elem)
                if first is None:
                    first = t
                    continue
                if t != first and not _optional_of(t, first) and not _optional_of(first, t):
                    out.append((ast.positions.get(elem.id, 0),
                                f"expected type '{format_type(first)}' but found '{format_type(t)}'"))
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
        return (n is not None and n.kind == "call" and n.value in ("_[_]", "_[?_]") and n.args
                and n.args[0].kind == "ident" and n.args[0].value == ATTR)

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
            out.append((ast.positions.get(rng.id, 0),
                        "expression of type 'any' cannot be range of a comprehension (must be list, map, or dynamic)"))
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
        if n.kind == "call" and n.operand is None and n.value in ("int", "uint", "double") and len(n.args) == 1:
            a = n.args[0]
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
        ident = node.value if node.kind == "select" else (
            node.args[1].value if node.args[1].kind == "const" and node.args[1].const_type == "string" else None)
        if ident is not None:
            out.append((d.value, ident))
    return out


def attribute_derived(node: Node) -> bool:
    """Whether an expression has cel-go's AnyType (an attribute value) rather than dyn."""
    if _is_attribute_value(node):
        return True
    if node.kind == "call" and node.value == "_?_:_" and len(node.args) == 3:
        return attribute_derived(node.args[1]) or attribute_derived(node.args[2])
    return False


def format_issue(src: str, offset: int, message: str) -> str:
    """ERROR: <input>:L:C: msg + source line + caret, like cel-go's Issues.String()."""
    line_start = src.rfind("\n", 0, offset) + 1 if offset > 0 else 0
    line_no = src.count("\n", 0, offset) + 1
    col = offset - line_start
    line_end = src.find("\n", offset)
    text = src[line_start:line_end if line_end != -1 else len(src)]
    return f"ERROR: <input>:{line_no}:{col + 1}: {message}\n | {text}\n | {'.' * col}^"
