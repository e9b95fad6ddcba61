"""DRA CEL conformance table: expected values are Kubernetes' (dra-facts.md §1, cel-engines.md table)."""

from __future__ import annotations

import pytest
from cel_conformance_table import BIGLIST, GPU, GPU8, KNOWN_DIFFERENCES, LISTS, ROWS, V_ALL, C, D  # noqa: F401

from kubectl_dra.cel import CelCompileError, CelEnvironment


def _ids():
    for expr, dev, exp, versions in ROWS:
        for v in versions:
            yield pytest.param(expr, dev, exp, v, id=f"{v[0]}.{v[1]}:{expr[:70]}")


@pytest.fixture(scope="module")
def envs():
    return {
        (1, 34): CelEnvironment((1, 34)),
        (1, 35): CelEnvironment((1, 35)),
        (1, 36): CelEnvironment((1, 36), list_attributes=False),
        (1, 37): CelEnvironment((1, 37)),
        (1, 38): CelEnvironment((1, 38)),
    }


@pytest.mark.parametrize("expr,device,expected,version", list(_ids()))
def test_conformance(envs, expr, device, expected, version):
    env = envs[version]
    if isinstance(expected, tuple) and expected[0] == "compile":
        with pytest.raises(CelCompileError) as ei:
            env.compile(expr)
        assert expected[1] in str(ei.value)
        return
    sel = env.compile(expr)
    res = sel.evaluate(device)
    if isinstance(expected, tuple):
        assert res.value is None
        assert res.error is not None and expected[1] in res.error, res
    else:
        assert res.error is None, res.error
        assert res.value is expected


def test_list_gate_in_136():
    on = CelEnvironment((1, 36), list_attributes=True)
    off = CelEnvironment((1, 36), list_attributes=False)
    expr = 'device.attributes["nic.example.com"].ports.exists(p, p == 2)'
    assert on.compile(expr).evaluate(LISTS).value is True
    # gate off: attribute values have cel-go's AnyType (no comprehension over them) ...
    with pytest.raises(CelCompileError, match="expression of type 'any' cannot be range of a comprehension"):
        off.compile(expr)
    # ... and any list-valued attribute on the device aborts every evaluation on it
    res = off.compile('device.attributes["nic.example.com"].name == "eth0"').evaluate(LISTS)
    assert (
        res.value is None and res.error.startswith("attribute ") and res.error.endswith(": unsupported attribute value")
    )


def test_includes_48_item_limit_only_in_136():
    expr = 'device.attributes["d"].many.includes(999)'
    res = CelEnvironment((1, 36), list_attributes=True).compile(expr).evaluate(BIGLIST)
    assert res.error == "'includes' function cannot be applied to lists longer than 48 values"
    assert (
        CelEnvironment((1, 36), list_attributes=True)
        .compile('device.attributes["d"].many.includes(3)')
        .evaluate(BIGLIST)
        .value
        is True
    )
    assert CelEnvironment((1, 37)).compile(expr).evaluate(BIGLIST).value is False


def test_no_such_key_hint_only_in_137():
    expr = 'device.attributes["gpu.example.com"].nope == 1'
    plain = CelEnvironment((1, 36)).compile(expr).evaluate(GPU).error
    hinted = CelEnvironment((1, 37)).compile(expr).evaluate(GPU).error
    assert plain == "no such key: nope"
    assert hinted == (
        "no such key: nope. consider using CEL optional chaining (.? followed by orValue()) "
        "or guarding the check with has() for optional fields"
    )


def test_compile_error_wording_and_caret():
    with pytest.raises(CelCompileError) as ei:
        CelEnvironment((1, 35)).compile('device.driver == "a" &&')
    msg = str(ei.value)
    assert msg.startswith("compilation failed: ERROR: <input>:1:")
    assert "\n | device.driver" in msg and "^" in msg


def test_renamed_member_error_mentions_original_name():
    with pytest.raises(CelCompileError) as ei:
        CelEnvironment((1, 36)).compile('"abc".indexOf(1) == 0')
    assert "indexOf" in str(ei.value) and "k8sIdxO" not in str(ei.value)


def test_too_long_expression():
    expr = "true && " * 1300 + "true"
    assert len(expr) > 10 * 1024
    with pytest.raises(CelCompileError) as ei:
        CelEnvironment((1, 36)).compile(expr)
    assert "10240" in str(ei.value)


def test_domain_of_unqualified_names_is_driver():
    env = CelEnvironment((1, 36))
    dev = {"driver": "a.com", "attributes": {"x": {"int": 1}, "b.com/x": {"int": 2}}, "capacity": {}}
    assert env.compile('device.attributes["a.com"].x == 1 && device.attributes["b.com"].x == 2').evaluate(dev).value
    assert env.compile('has(device.attributes["b.com"].x) && !has(device.attributes["a.com/x"].x)').evaluate(dev).value


def test_compile_cache_returns_same_object():
    env = CelEnvironment((1, 36))
    assert env.compile("true") is env.compile("true")


def test_reads_report_paths_and_values():
    env = CelEnvironment((1, 36))
    sel = env.compile(
        f'{C}.memory.compareTo(quantity("8Gi")) >= 0 && device.driver == "gpu.example.com" '
        '&& device.attributes["gpu.example.com"].nope == 1'
    )
    res = sel.evaluate(GPU8)
    assert (("capacity", "gpu.example.com", "memory"), "8Gi") in res.reads
    assert (("driver",), "gpu.example.com") in res.reads
    assert (("attributes", "gpu.example.com", "nope"), None) in res.reads


@pytest.mark.parametrize("expr,device,k8s_value,reason", KNOWN_DIFFERENCES, ids=[r[0][:60] for r in KNOWN_DIFFERENCES])
def test_known_differences_are_flagged_inexact(expr, device, k8s_value, reason):
    """Where the local engine cannot give Kubernetes' answer it says so (exact=False, "kubectl-dra:")."""
    env = CelEnvironment((1, 36))
    try:
        res = env.compile(expr).evaluate(device)
    except CelCompileError as e:
        assert e.exact is False and str(e).startswith("kubectl-dra:"), (str(e), reason)
        return
    if res.error is None:  # pragma: no cover - would mean the engine got better
        assert res.value is k8s_value
        return
    assert res.exact is False and res.error.startswith("kubectl-dra:"), (res, reason)
