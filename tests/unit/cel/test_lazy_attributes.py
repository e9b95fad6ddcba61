"""Kubernetes 1.38's attribute conversion and lazy attribute maps (kubectl_dra/cel/_lazy.py): an invalid value
fails only the expressions that touch it; duplicate spellings resolve to the fully-qualified one; a scalar wins
over a list; an empty list is invalid.  Checked against the 1.38 oracle (tests/oracle/build.sh 1.38), plus the
contract analyze/devices/checks.py relies on (conversion_error, read_key)."""

from __future__ import annotations

import json
import random
import subprocess

import pytest
from test_oracle_agreement import _norm, _oracle, _scenario

from kubectl_dra.cel import CelCompileError, CelEnvironment

INVALID = "value is invalid or its type is not supported by this version"
BAD = {
    "driver": "d",
    "attributes": {
        "bad": {"version": "01.2.3"},
        "ok": {"int": 1},
        "s": {"string": "a"},
        "l": {"ints": [1, 2]},
        "v": {"version": "1.2.3"},
        "e/x": {"int": 5},
        "e/bad2": {"ints": []},
    },
    "capacity": {"m": {"value": "1Gi"}},
}
DUP = {
    "driver": "d",
    "attributes": {"x": {"version": "1.2.3.4"}, "d/x": {"int": 1}, "d/y": {"bools": []}, "y": {"int": 7}},
    "capacity": {"c": {"value": "1"}, "d/c": {"value": "2"}},
}
DUP_REVERSED = {
    "driver": "d",
    "attributes": {"d/x": {"int": 1}, "x": {"version": "1.2.3.4"}, "y": {"int": 7}, "d/y": {"bools": []}},
    "capacity": {"d/c": {"value": "2"}, "c": {"value": "1"}},
}
MIXED = {
    "driver": "d",
    "attributes": {
        "b": {"int": 1, "ints": [2]},
        "t": {"bool": True, "string": "a"},
        "c": {"ints": [], "strings": ["z"]},
        "n": {"ints": [], "bools": []},
        "none": {},
        "vs": {"versions": ["1.0.0", "01.0.0"]},
        "w": {"versions": ["1.0.0", "2.0.0"]},
        "big": {"version": "18446744073709551616.0.0"},
    },
    "capacity": {},
}
TYPED = {
    "driver": "d",
    "attributes": {"v": {"version": "1.2.3"}, "i": {"int": 1}, "l": {"ints": [1]}},
    "capacity": {"m": {"value": "1Gi"}},
}
A = 'device.attributes["d"]'
E = 'device.attributes["e"]'
C = 'device.capacity["d"]'

# (expression, device): touched and untouched invalid values in every form upstream distinguishes
CASES = [
    # field and index reads, presence tests, optionals
    (f'{A}.ok == 1 && {A}.s == "a" && {A}.v == semver("1.2.3")', BAD),
    (f'{A}.bad == semver("1.2.3")', BAD),
    (f'{A}["bad"] == 1', BAD),
    (f'{A}["b" + "ad"] == 1', BAD),
    (f"{E}.x == 5", BAD),
    (f"{E}.bad2.size() == 0", BAD),
    (f"has({A}.bad)", BAD),
    (f"has({A}.bad) || true", BAD),
    (f"false && has({A}.bad)", BAD),
    (f"has({A}.ok) && !has({A}.zz)", BAD),
    ("has(device.attributes.d.bad)", BAD),
    ("has(device.attributes.zz.bad)", BAD),
    (f'{A}[?"bad"].hasValue()', BAD),
    (f"{A}.?bad.orValue(1) == 1", BAD),
    (f"{A}.?ok.orValue(2) == 1 && {A}.?zz.orValue(2) == 2", BAD),
    ('device.attributes[?"e"].?bad2.hasValue()', BAD),
    ("device.attributes.?d.?bad.orValue(0) == 0", BAD),
    (f"optional.of({A}).?bad.hasValue()", BAD),
    (f"{A}.bad == 1 || true", BAD),
    (f"{A}.bad == 1 || false", BAD),
    (f"true ? true : {A}.bad == 1", BAD),
    (f"cel.bind(m, {A}, m.ok == 1)", BAD),
    (f"cel.bind(m, {A}, m.bad == 1)", BAD),
    (f"cel.bind(a, {A}.bad, true)", BAD),
    (f"cel.bind(a, {A}.bad, a == 1)", BAD),
    (f"[0, 1, 2].exists(i, i == 1) && cel.bind(a, {A}.bad, true)", BAD),
    (f"cel.bind(a, {A}.bad, {A}.ok == 2 && a == 0)", BAD),
    (f"cel.bind(a, {A}.bad, {A}.ok == 1 && a == 0)", BAD),
    (f'{A}.ok == 2 || cel.bind(a, {A}.ok, a == 1 && cel.bind(b, {A}.bad, {A}.s == "b" && b == 0))', BAD),
    (f"dyn({A}).bad == 1", BAD),
    (f"dyn({A}).ok == 1", BAD),
    (f"[{A}][0].bad == 1", BAD),
    (f'{{"a": {A}}}.a.ok == 1', BAD),
    (f"[1, 2].all(x, x != {A}.bad)", BAD),
    (f"type({A}.bad) == int", BAD),
    (f'"%s".format([{A}.bad]) == ""', BAD),
    # `in`, size, keys, iteration
    (f'"bad" in {A}', BAD),
    (f'"ok" in {A} && !("bad2" in {E}) && "x" in {E}', BAD),
    (f"{A}.size() == 6 && size({E}) == 2 && device.attributes.size() == 2", BAD),
    (f'{A}.exists(k, k == "bad") && {A}.all(k, k != "zz")', BAD),
    (f'{A}.filter(k, k.startsWith("b")).size() == 1 && {A}.map(k, k).size() == 6', BAD),
    (f"{A}.exists(k, {A}[k] == 1)", BAD),
    (f"{A}.all(k, {A}[k] != 99)", BAD),
    (f'{A}.all(k, k == "bad" || {A}[k] != 99)', BAD),
    (f"{A}.all(k, k in {A})", BAD),
    (f"{A}.map(k, {A}[k]).size() == 6", BAD),
    # the value variable of two-variable comprehensions
    (f'{A}.exists(k, v, k == "ok" && v == 1)', BAD),
    (f"{A}.exists(k, v, v == 1)", BAD),
    (f"{A}.all(k, v, v != 99)", BAD),
    (f'{A}.all(k, v, k == "bad" || v != 99)', BAD),
    (f'{E}.all(k, v, k == "x" || v == 5)', BAD),
    (f'{A}.transformList(k, v, k != "bad", v).size() == 5', BAD),
    (f'{A}.transformList(k, v, k == "bad", v).size() == 1', BAD),
    (f"{A}.transformList(k, v, k).size() == 6", BAD),
    ("device.attributes.all(d, m, m.size() > 0)", BAD),
    ("device.attributes.exists(d, m, m.x == 5)", BAD),
    # map equality: an error where upstream's equalMaps reaches the value, `!=` is then true
    (f"{A} == {A}", BAD),
    (f"{A} != {A}", BAD),
    (f'{E} == {{"x": 5, "bad2": 1}}', BAD),
    (f'{E} != {{"x": 5, "bad2": 1}}', BAD),
    (f'{E} == {{"x": 5}}', BAD),
    (f'{{"x": 5, "bad2": 1}} == {E}', BAD),
    (f"({E} == {E}) || true", BAD),
    ("device.attributes == device.attributes", BAD),
    ("device.attributes != device.attributes", BAD),
    (f"[{A}] == [{A}]", BAD),
    (f'{{"a": {A}}} == {{"a": {A}}}', BAD),
    ('device.capacity["d"].m == quantity("1Gi")', BAD),
    # equalMaps also for valid values: a Semver or Quantity against another type is "no such overload"
    (f'{A} == {{"v": dyn("1.2.3"), "i": dyn(1), "l": dyn([1])}}', TYPED),
    (f'{A} != {{"v": dyn("1.2.3"), "i": dyn(1), "l": dyn([1])}}', TYPED),
    (f'{{"v": dyn("1.2.3"), "i": dyn(1), "l": dyn([1])}} == {A}', TYPED),
    (f'{A} == {{"v": dyn(semver("1.2.3")), "i": dyn(1), "l": dyn([1])}}', TYPED),
    (f'{A} == {{"v": dyn(semver("1.2.3")), "i": dyn(2), "l": dyn([1])}}', TYPED),
    (f'{A} == {{"v": dyn(null), "i": dyn(1), "l": dyn([1])}}', TYPED),
    (f'{C} == {{"m": dyn(1)}}', TYPED),
    (f'{C} != {{"m": dyn(1)}}', TYPED),
    (f'{{"m": dyn(1)}} == {C}', TYPED),
    (f'{C} == {{"m": quantity("1024Mi")}}', TYPED),
    ('device.attributes == {"d": {"v": dyn("1.2.3"), "i": dyn(1), "l": dyn([1])}}', TYPED),
    ('device.capacity == {"d": {"m": dyn("1Gi")}}', TYPED),
    (f'dyn({A}) == {{"v": dyn("1.2.3"), "i": dyn(1), "l": dyn([1])}}', TYPED),
    (f'{A} in [{{"v": dyn("1.2.3"), "i": dyn(1), "l": dyn([1])}}]', TYPED),
    (f"{A} == {A} && {C} == {C} && device.attributes == device.attributes", TYPED),
    # string.format of the map
    (f'"%s".format([{E}]) != ""', BAD),
    (f'"%s".format([[{E}]]) != ""', BAD),
    (f'"%s-%d".format([{A}.s, {A}.ok]) == "a-1"', BAD),
    # odd spellings (the rewrite follows the source text)
    (f"( {A} ).ok == 1", BAD),
    (f"(({A})).bad == 1 || true", BAD),
    (f"{A} . ok == 1", BAD),
    (f"{A} // comment\n .bad == 1", BAD),
    (f"-{A}.ok == -1 && !({A}.ok == 2)", BAD),
    # duplicate spellings: the fully-qualified one wins (1.37 picked one at random)
    (f"{A}.x == 1", DUP),
    (f"{A}.x == 1", DUP_REVERSED),
    (f"{A}.y == 7", DUP),
    (f"{A}.y == 7", DUP_REVERSED),
    (f"{A}.size() == 2 && has({A}.x)", DUP),
    ('device.capacity["d"].c == quantity("2")', DUP),
    ('device.capacity["d"].c == quantity("2")', DUP_REVERSED),
    # several fields set: scalars first, then the first non-empty list; otherwise invalid
    (f"type({A}.b) == int && {A}.b == 1", MIXED),
    (f"type({A}.t) == bool", MIXED),
    (f'{A}.c == ["z"]', MIXED),
    (f"{A}.n.size() == 0", MIXED),
    (f"has({A}.none)", MIXED),
    (f"{A}.vs.size() == 2", MIXED),
    (f'{A}.w[1] == semver("2.0.0") && {A}.w.exists(x, x.major() == 2)', MIXED),
    (f"{A}.big.major() > 0", MIXED),
    (f"{A}.size() == 8", MIXED),
    # the CIDR library v1
    ('cidr("10.0.0.0/8").isMask() && !cidr("10.0.0.1/8").isMask()', BAD),
    ('cidr("2001:db8::/32").isMask() && !cidr("2001:db8::1/32").isMask() && cidr("::1/128").isMask()', BAD),
    ('cidr("192.168.0.1/24").masked().isMask() && cidr("0.0.0.0/0").isMask() && !cidr("1.0.0.0/0").isMask()', BAD),
    ('cidr("1.2.3.4/30").isMask() && !cidr("1.2.3.4/29").isMask()', BAD),
    ('"10.0.0.0/8".isMask()', BAD),
]


def _random_cases(seed: int, n: int) -> list[str]:
    """Touching and non-touching reads combined with && || ! ?: (error absorption decides the outcome)."""
    rnd = random.Random(seed)
    atoms = [
        f"{A}.bad == 1",
        f"{A}.ok == 1",
        f"{A}.ok == 2",
        f"has({A}.bad)",
        f"has({A}.ok)",
        f'"bad" in {A}',
        f"{A}.size() == 6",
        f'{A}.exists(k, k == "bad")',
        f"{E}.bad2.size() == 0",
        f"{E}.x == 5",
        f'{A}[?"bad"].hasValue()',
        f"{A}.?ok.orValue(0) == 1",
        f"{E} == {E}",
        f"{E} != {E}",
        "true",
        "false",
        f"{A}.exists(k, v, v == 1)",
        f"{A}.all(k, v, v != 7)",
        f"cel.bind(q, {A}.bad, false)",
        f"{A}.l.all(x, x > 0)",
        f'{A}.s == "a"',
        f"type({A}.bad) == string",
    ]

    def gen(depth: int = 0) -> str:
        r = rnd.random()
        if depth > 2 or r < 0.35:
            return rnd.choice(atoms)
        if r < 0.6:
            return f"({gen(depth + 1)} && {gen(depth + 1)})"
        if r < 0.85:
            return f"({gen(depth + 1)} || {gen(depth + 1)})"
        if r < 0.93:
            return f"!{gen(depth + 1)}"
        return f"({gen(depth + 1)} ? {gen(depth + 1)} : {gen(depth + 1)})"

    return list(dict.fromkeys(gen() for _ in range(n)))


def _mine(env: CelEnvironment, expr: str, dev: dict) -> tuple:
    try:
        res = env.compile(expr).evaluate(dev)
    except CelCompileError as e:
        return ("error", str(e))
    return ("value", res.value) if res.error is None else ("error", res.error)


def _agree(pairs: list[tuple[str, dict]]) -> list:
    binary = _oracle("1.38")
    payload = "\n".join(json.dumps(_scenario(i, e, d, "1.38", False)) for i, (e, d) in enumerate(pairs)) + "\n"
    proc = subprocess.run([str(binary)], input=payload, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    outputs = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(outputs) == len(pairs)
    env = CelEnvironment((1, 38))
    mismatches = []
    for (expr, dev), out in zip(pairs, outputs):
        assert not out.get("inputError"), (expr, out["inputError"])
        entry = out["cel"][0]
        theirs = ("value", entry["result"]) if entry["error"] is None else ("error", entry["error"])
        mine = _mine(env, expr, dev)
        if mine[0] != theirs[0] or (mine[0] == "value" and mine[1] != theirs[1]):
            mismatches.append((expr, mine, theirs))
        elif mine[0] == "error" and _norm(mine[1]) != _norm(theirs[1]):
            mismatches.append((expr, "text", mine[1], theirs[1]))
    return mismatches


@pytest.mark.oracle
def test_invalid_attribute_forms_agree_with_upstream_138():
    mismatches = _agree(CASES)
    assert not mismatches, "\n".join(repr(m) for m in mismatches)


@pytest.mark.oracle
@pytest.mark.parametrize("seed", [41, 42])
def test_random_touches_agree_with_upstream_138(seed):
    exprs = _random_cases(seed, 250)
    mismatches = _agree([(e, BAD) for e in exprs])
    assert not mismatches, f"{len(mismatches)} of {len(exprs)}:\n" + "\n".join(repr(m) for m in mismatches[:30])


# ------------------------------------------------------------------ the contract with analyze/devices/checks.py
def test_no_per_device_conversion_error_in_138():
    assert CelEnvironment((1, 37)).conversion_error(BAD) is not None
    env = CelEnvironment((1, 38))
    assert env.conversion_error(BAD) is None
    assert env.invalid_attributes(BAD) == frozenset({("d", "bad"), ("e", "bad2")})
    # an invalid plain spelling hidden by a valid fully-qualified one is no invalid value
    assert env.invalid_attributes(DUP) == frozenset({("d", "y")}) == env.invalid_attributes(DUP_REVERSED)


def test_evaluate_returns_the_per_expression_error_in_138():
    env = CelEnvironment((1, 38))
    assert env.compile(f"{A}.ok == 1").evaluate(BAD).value is True
    res = env.compile(f"{A}.bad.major() == 1").evaluate(BAD)
    assert res.value is None and res.error == f"attribute bad: {INVALID}" and res.exact
    assert env.compile(f"{E}.bad2.size() == 0").evaluate(BAD).error == f"attribute bad2: {INVALID}"
    # before 1.38 the device fails every selector with the conversion error
    old = CelEnvironment((1, 37)).compile(f"{A}.ok == 1").evaluate(BAD)
    assert old.value is None and old.error.startswith("attribute ")


def test_read_key_tells_invalid_from_valid_values():
    """Results are shared between devices with equal read keys: the key of every expression that can touch an
    attribute differs between an invalid and a valid value of it, and devices that differ only in an attribute
    the expression cannot read share a key and a result."""
    env = CelEnvironment((1, 38))
    good = {**BAD, "attributes": {**BAD["attributes"], "bad": {"version": "1.2.3"}, "e/bad2": {"ints": [1]}}}
    touching = [
        f"{A}.bad.major() == 1",
        f"has({A}.bad)",
        f"{A}.size() == 6",
        f"{A}.exists(k, v, v == 1)",
        f"{A} == {A}",
        'device.attributes.exists(d, d == "d")',
        'device.attributes["d" + ""].ok == 1',
        f"cel.bind(m, {A}, m.ok == 1)",
    ]
    for expr in touching:
        sel = env.compile(expr)
        assert sel.read_key(BAD) != sel.read_key(good), expr
    sel = env.compile(f"{A}.ok == 1 && {E}.x == 5")
    assert sel.read_key(BAD) == sel.read_key(good)
    assert sel.evaluate(BAD).value is sel.evaluate(good).value is True
    # a memoised result equals a fresh evaluation, whichever device came first
    for expr in touching:
        for first, second in ((BAD, good), (good, BAD)):
            sel = CelEnvironment((1, 38)).compile(expr)
            sel.evaluate(first)
            fresh = CelEnvironment((1, 38)).compile(expr).evaluate(second)
            again = sel.evaluate(second)
            assert (again.value, again.error) == (fresh.value, fresh.error), expr


def test_guarded_program_only_for_devices_that_need_it():
    """The rewritten program runs only when the device has an invalid value the expression can read."""
    env = CelEnvironment((1, 38))
    sel = env.compile(f"{A}.ok == 1")
    assert sel.evaluate(BAD).value is True
    assert sel._guard is None
    sel = env.compile(f"{A}.bad == 1 || {A}.ok == 1")
    assert sel.evaluate(BAD).value is True
    assert sel._guard is not None and "k8sInvalidAttr" in sel.guarded_source


def test_guarded_program_is_transparent_without_invalid_values():
    """On a device without invalid values the guarded program must give what the normal one gives: every
    expression of the table and of the random, library and bind generators, rewritten."""
    from cel_conformance_table import GPU, ODD, ROWS
    from cel_library_fuzz import library_expressions
    from test_oracle_agreement import _bind_expressions, _random_expressions

    pairs = [(e, GPU) for e in _random_expressions(14, 300) + library_expressions(24, 400)]
    pairs += [(e, d) for e in _bind_expressions(34, 300) for d in (GPU, ODD)]
    pairs += [(e, d) for e, d, _x, _v in ROWS if not CelEnvironment((1, 38)).invalid_attributes(d)]
    env = CelEnvironment((1, 38))
    compared = 0
    for expr, dev in pairs:
        try:
            sel = env.compile(expr)
        except CelCompileError:
            continue
        program, lazy_program = sel._guarded_programs()
        assert program is not None, expr
        act = env._activation(dev)
        results = []
        for prog, lazy in ((sel._program, sel._lazy_program), (program, lazy_program)):
            res = sel._run(prog, act, dev, ())
            if res.error is not None and lazy is not None:
                res = sel._run(lazy, act, dev, ())
            results.append((res.value, res.error))
        assert results[0] == results[1], (expr, results)
        compared += 1
    assert compared > 1000


def test_1_37_semantics_unchanged():
    env = CelEnvironment((1, 37))
    # the list wins over the scalar, an empty list is a list, a bad version fails the device
    assert env.compile(f"type({A}.b) == list").evaluate({**MIXED, "attributes": {"b": MIXED["attributes"]["b"]}}).value
    assert env.compile(f"{A}.e.size() == 0").evaluate({"driver": "d", "attributes": {"e": {"ints": []}}}).value
    with pytest.raises(CelCompileError, match="undeclared reference to 'isMask' \\(in container ''\\)"):
        env.compile('cidr("10.0.0.0/8").isMask()')


def test_reads_show_the_value_1_38_converts():
    dev = {"driver": "d", "attributes": {"b": {"ints": [2], "int": 1}}, "capacity": {}}
    res = CelEnvironment((1, 38)).compile(f"{A}.b == 1").evaluate(dev)
    assert res.value is True and res.reads == ((("attributes", "d", "b"), 1),)
    res = CelEnvironment((1, 37)).compile(f"{A}.b == [2]").evaluate(dev)
    assert res.value is True and res.reads == ((("attributes", "d", "b"), [2]),)
