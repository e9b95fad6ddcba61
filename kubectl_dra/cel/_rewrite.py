"""Source rewriting: the programs cel-cpp runs so that they answer as cel-go (unknown domains read as empty maps,
Semver and Quantity equality, cel.bind run as a map, 1.38's map proxies)."""

from __future__ import annotations

from . import _analysis
from ._common import QEQ
from ._engine import Engine
from ._source import apply_edits, left_operand_start, matching, right_operand_end, tokenize
from ._unbind import has_bind, inline_binds, map_binds


def run_programs(eng: Engine, checked_src: str, checked, ast, rewrite_index_ids, toks, internal=frozenset()):
    """The programs that run: (program, its source, lazy-bind program or None, its source or None).
    internal: the guarded rewrite's own variables (bound wherever they occur, see inline_binds)."""
    # unknown domain -> empty map: device.attributes["d"] -> device.attributes[?"d"].orValue({})
    # and `<Semver attribute> == <non-Semver>` must fail with "no such overload" as in cel-go.
    match = matching(toks)
    by_start = {t.start: k for k, t in enumerate(toks)}
    attr_edits = []
    for nid in rewrite_index_ids:
        k = by_start.get(ast.positions.get(nid))
        if k is None or toks[k].text != "[" or k not in match:
            continue
        close = toks[match[k]]
        attr_edits.append((toks[k].start, toks[k].end, "[?"))
        attr_edits.append((close.end, close.end, ".orValue({})"))
    attr_edits += outer_map_edits(ast, toks, match, by_start)
    eq_edits = semver_equality_edits(ast, toks, match, by_start)
    program, run_source, lazy_program, lazy_source = checked, checked_src, None, None
    binds = has_bind(checked_src)
    for candidate in (eq_edits + attr_edits, attr_edits, []):
        if not candidate and not binds:
            continue
        run_src = apply_edits(checked_src, candidate) if candidate else checked_src
        # cel-cpp's cel.bind is unreliable after an early-exiting comprehension (_unbind.py)
        mapped = map_binds(run_src) if binds else run_src
        try:
            program = eng.env.compile(mapped)
            run_source = mapped
        except RuntimeError:
            continue
        if binds:
            lazy = inline_binds(run_src, internal)
            if lazy is not None:
                try:
                    lazy_program = eng.env.compile(lazy)
                    lazy_source = lazy
                except RuntimeError:
                    pass
        break
    return program, run_source, lazy_program, lazy_source


def proxy_equality(eng: Engine, base: tuple) -> tuple:
    """1.38: `==`/`!=` with an attribute or capacity map on the left compare as the map proxies' equalMaps
    (an error where it meets a Semver or Quantity of another type), for every device (_lazy.py)."""
    from ._ast import decode_serialized
    from ._lazy import VARIABLES, guarded_source

    src, _checked, ast = base[0], base[1], base[2]
    eq_src = guarded_source(ast, src, equality_only=True)
    if eq_src is None or eq_src == src:
        return base
    try:
        checked = eng.env.compile(eq_src)
        ast2 = decode_serialized(checked.serialize())
    except (RuntimeError, ValueError):
        return base
    ids = _analysis.plan_reads(ast2.expr).rewrite_index_ids
    return (eq_src, checked, ast2, ids, tokenize(eq_src), VARIABLES)


def guarded_programs(eng: Engine, ast, checked_src: str) -> tuple:
    """1.38: (program, lazy-bind program, the program's source) of the guarded source (_lazy.py); (None, None, None)
    when the rewrite is not possible."""
    from ._ast import decode_serialized
    from ._lazy import VARIABLES, guarded_source

    src = guarded_source(ast, checked_src)
    if src is not None:
        try:
            checked = eng.env.compile(src)
            ast2 = decode_serialized(checked.serialize())
            ids = _analysis.plan_reads(ast2.expr).rewrite_index_ids
            program, run_source, lazy_program, _ = run_programs(eng, src, checked, ast2, ids, tokenize(src), VARIABLES)
            return program, lazy_program, run_source
        except (RuntimeError, ValueError):
            pass
    return None, None, None


def outer_map_edits(ast, toks, match, by_start) -> list:
    """device.attributes / device.capacity return an empty map for any missing domain in
    Kubernetes, also through `[?d]` (always present), `.d` and `has(device.attributes.d)`
    (always true)."""
    out = []
    outer = ("device.attributes", "device.capacity")
    skip: set[int] = set()
    for k in range(len(toks) - 7):
        seq = [t.text for t in toks[k : k + 8]]
        if (
            seq[0] == "has"
            and seq[1] == "("
            and seq[2] == "device"
            and seq[3] == "."
            and seq[4] in ("attributes", "capacity")
            and seq[5] == "."
            and toks[k + 6].kind == "ident"
            and seq[7] == ")"
        ):
            out.append((toks[k].start, toks[k + 7].end, "true"))
            skip.add(toks[k + 5].start)
    stack = [ast.expr]
    while stack:
        n = stack.pop()
        stack.extend(n.children())
        if (
            n.kind == "call"
            and n.value == "_[?_]"
            and n.args
            and n.args[0].kind == "ident"
            and n.args[0].value in outer
        ):
            k = by_start.get(ast.positions.get(n.id))
            if k is None or k < 3 or toks[k].text != "[?" or k not in match or toks[k - 3].text != "device":
                continue
            out.append((toks[k - 3].start, toks[k - 3].start, "optional.of("))
            out.append((toks[match[k]].end, toks[match[k]].end, ".orValue({}))"))
        elif (
            n.kind == "select"
            and not n.test_only
            and n.operand is not None
            and n.operand.kind == "ident"
            and n.operand.value in outer
        ):
            pos = ast.positions.get(n.id)
            k = by_start.get(pos)
            if k is None or pos in skip or toks[k].text != "." or k + 1 >= len(toks):
                continue
            out.append((toks[k].start, toks[k + 1].end, f'[?"{n.value}"].orValue({{}})'))
    return out


def semver_equality_edits(ast, toks, match, by_start) -> list:
    """Equality differences between cel-go and cel-cpp, fixed by rewriting the operator:

    * cel-go's `==` calls lhs.Equal(rhs); Semver.Equal(non-Semver) is a "no such overload"
      error while cel-cpp's message equality says false: dyn left operands compared with a
      statically non-Semver right operand get a guard.
    * Quantity == Quantity is numeric (Cmp) in Kubernetes, but the message carries the
      representation (it decides isInteger/asInteger): statically Quantity-typed ==/!= becomes
      a library call."""
    from ._ast import decode_type

    out = []
    stack = [ast.expr]
    while stack:
        n = stack.pop()
        stack.extend(n.children())
        if n.kind != "call" or n.value not in ("_==_", "_!=_") or len(n.args) != 2:
            continue
        left, right = n.args
        lt = ast.types.get(left.id)
        rt = ast.types.get(right.id)
        if lt is None or rt is None:
            continue
        lt, rt = decode_type(lt), decode_type(rt)
        op = ast.positions.get(n.id)
        if op is None or op not in by_start:
            continue
        start = left_operand_start(toks, match, op)
        if start is None:
            continue
        quantity = ("msg", "kubernetes.Quantity")
        if lt == quantity and rt == quantity:
            end = right_operand_end(toks, match, by_start[op])
            if end is None:
                continue
            prefix = QEQ + "(" if n.value == "_==_" else "!" + QEQ + "("
            out.append((start, start, prefix))
            out.append((op, op + 2, ","))
            out.append((end, end, ")"))
            continue
        if n.value != "_==_":
            continue
        objects = (("msg", "kubernetes.Semver"), quantity)
        right_null = rt[0] == "null" or (right.kind == "const" and right.const_type == "null")
        if not ((lt[0] == "dyn" and not right_null and rt not in objects) or (lt in objects and rt[0] == "dyn")):
            continue
        end = right_operand_end(toks, match, by_start[op])
        if end is None:
            continue
        # both operands are evaluated (left first) exactly once, as cel-go's `==` does; no cel.bind
        # (see _unbind.py) and one comprehension iteration
        out.append((start, start, "[["))
        out.append((op, op + 2, ", "))
        out.append(
            (
                end,
                end,
                "]].map(k8sEqP, (type(k8sEqP[0]) in [kubernetes.Semver, kubernetes.Quantity] && "
                'k8sEqP[1] != null && type(k8sEqP[1]) != type(k8sEqP[0])) ? dyn(0) + dyn("") : '
                "k8sEqP[0] == k8sEqP[1])[0]",
            )
        )
    return out
