"""cel-cpp (cel-expr-python 0.1.3) returns wrong results for a cel.bind that follows a comprehension
which stopped early; the environment never runs a bind comprehension (kubectl_dra/cel/_unbind.py)."""

from __future__ import annotations

import pytest
from cel_conformance_table import GPU, ODD, D

from kubectl_dra.cel import CelEnvironment
from kubectl_dra.cel._engine import engine_for as _engine
from kubectl_dra.cel._unbind import inline_binds, map_binds

BUGGY = ["[0, 1, 2].exists(x, x == 1) && cel.bind(a, 5, a == 2)", "[0, 1, 2].all(x, x != 1) || cel.bind(a, 5, a == 2)"]


def _raw(src: str):
    env = _engine(True).env
    act = env.Activation(
        {"device.driver": "d", "device.attributes": {}, "device.capacity": {}, "device.allowMultipleAllocations": False}
    )
    return env.compile(src).eval(act).value()


@pytest.mark.parametrize("expr", BUGGY)
def test_engine_bug_still_present_and_rewrite_avoids_it(expr):
    # if a newer cel-expr-python fixes this, the rewrite can go (this test then says so)
    assert _raw(expr) is True
    assert _raw(map_binds(expr)) is False
    assert _raw(inline_binds(expr)) is False


@pytest.mark.parametrize("version", [(1, 34), (1, 36), (1, 37)])
def test_no_bind_reaches_the_engine(version):
    env = CelEnvironment(version)
    exprs = [
        f"[0, 1, 2].exists(x, x == {D}.index) && {D}.model == 2",
        f'cel.bind(g, {D}, g.model == "H100" && cel.bind(i, g.index, i == 0))',
    ] + BUGGY
    for expr in exprs:
        sel = env.compile(expr)
        assert "bind" not in sel.run_source, sel.run_source
    sel = env.compile(exprs[0])
    assert sel.evaluate(ODD).value is False
    assert sel.evaluate({**ODD, "attributes": {**ODD["attributes"], "model": {"int": 2}}}).value is True
    assert env.compile(exprs[1]).evaluate(GPU).value is True


def test_lazy_initialiser_semantics():
    """cel-go evaluates a bind's initialiser only where it is used (checked against the oracle in the
    conformance rows): the eager map form's error is re-checked with the inlined form."""
    env = CelEnvironment((1, 36))
    assert env.compile("cel.bind(a, 1 / 0, true)").evaluate(GPU).value is True
    assert env.compile("cel.bind(a, 1 / 0, false && a == 1)").evaluate(GPU).value is False
    assert env.compile("cel.bind(a, 1 / 0, a == 1)").evaluate(GPU).error == "division by zero"
    assert env.compile(f'cel.bind(a, {D}.nope, {D}.model == "H100" || a == 1)').evaluate(GPU).value is True


def test_inline_refuses_capture_and_blowup():
    assert inline_binds("cel.bind(a, x, [1].map(x, a))") is None  # x would be captured
    assert inline_binds("cel.bind(a, 1, [1].map(a, a))") is None  # a shadowed
    assert inline_binds("cel.bind(a, 1, a.b + a + size(a))") == "((1).b + (1) + size((1)))"
    chain = (
        "cel.bind(a, 1, "
        + "".join(f"cel.bind({v}, {p}+{p}+{p}+{p}+{p}+{p}+{p}+{p}, " for p, v in zip("abcdef", "bcdefg"))
        + "g > 0"
        + ")" * 7
    )
    assert inline_binds(chain) is None  # 8^6 copies
    assert map_binds(chain).count(".map(") == 7
