"""A derived attribute's expression (DRADerivedAttributes, 1.37+): compiled like a selector, but its result is a
device attribute, not a bool.

upstream (dynamic-resource-allocation/cel, v0.37/v0.38): Cache.GetOrCompileDerivedAttribute compiles with
Options.DerivedAttribute, whose validateOutputType accepts a primitive scalar (string, int, bool, semver, the
attribute type any/dyn) or a list of those (lists always: the allocator compiles stored expressions);
EvaluateDerivedAttribute evaluates it on the same device view as DeviceMatches and turns the value into a
DeviceAttribute (valToDeviceAttribute)."""

from __future__ import annotations

import re
from dataclasses import replace

from ._common import DERIVED_EMPTY_LIST, CelCompileError, EvalResult
from ._messages import celgo_type_name, result_type_name
from ._selector import CompiledSelector

_ELEMENTS = ("BOOL", "INT", "STRING", "DYN", "ANY", "kubernetes.Semver")
# valToDeviceAttribute: the attribute field of a scalar and of a list, by the value's CEL type
_SCALAR = {"BOOL": "bool", "INT": "int", "STRING": "string", "kubernetes.Semver": "version"}
# Go's %T of a value valToDeviceAttribute cannot keep ("unsupported CEL return type: %T")
_GO_TYPE = {"DOUBLE": "float64", "UINT": "uint64", "BYTES": "[]uint8", "NULL_TYPE": "structpb.NullValue"}


def _allowed(name: str) -> bool:
    if name in _ELEMENTS:
        return True
    return name.startswith("LIST<") and name[5:-1] in _ELEMENTS


def _semver_text(v) -> str:
    return str(getattr(v, "v", v))


# Upstream's derived version is semver.Version.String(), build metadata included ("1.2.3+abc"); this engine's
# semver type keeps none. A version that may carry some (a value read with a "+", a literal such as
# semver("1.2.3+b")) comes back flagged build_dropped: where constraints compare versions as strings (1.37), the
# allocator leaves it open (allocator/derived.py, SEMVER_BUILD); 1.38 compares them as semver, build ignored.
SEMVER_BUILD = (
    "kubectl-dra: the derived version may carry build metadata (+...), which upstream keeps in the attribute and "
    "compares, and the local CEL engine drops; Kubernetes' value is unknown"
)
_BUILD_LITERAL = re.compile(r"""["'][^"']*[0-9]\+[0-9A-Za-z.-]""")


def _may_carry_build(expression: str, reads: tuple) -> bool:
    return any(isinstance(v, str) and "+" in v for _, v in reads) or bool(_BUILD_LITERAL.search(expression))


class CompiledDerived(CompiledSelector):
    """evaluate(device).value is the derived attribute as a slice publishes one ({"int": 3}, {"strings": [...]}),
    or .error is the evaluation error as EvaluateDerivedAttribute returns it."""

    @staticmethod
    def _check_result_type(rt, ast, eng, list_attributes: bool) -> None:
        if not _allowed(rt.name()):
            raise CelCompileError(
                "must evaluate to a primitive scalar (string, integer, boolean, semver) or a list of these scalars, "
                f"not {celgo_type_name(rt.name())}"
            )

    def evaluate(self, device: dict) -> EvalResult:
        res = super().evaluate(device)
        if res.error is None and isinstance(res.value, bool):
            return EvalResult({"bool": res.value}, None, res.reads)
        return res

    def _semver_build(self, value, reads: tuple) -> bool:
        """A semver result (or a list holding one) that may carry build metadata."""
        if value.type().name() != "kubernetes.Semver":
            if not any(i.type().name() == "kubernetes.Semver" for i in value.value()):
                return False
        return _may_carry_build(self.expression, reads)

    def _other_result(self, value, reads: tuple) -> EvalResult:
        t = value.type().name()
        res = self._derived_value(value, t, reads)
        if (
            res.error is None
            and (t == "kubernetes.Semver" or t.startswith("LIST"))
            and self._semver_build(value, reads)
        ):
            return replace(res, build_dropped=True)
        return res

    def _derived_value(self, value, t: str, reads: tuple) -> EvalResult:
        v = value.value()
        if t in _SCALAR:
            field = _SCALAR[t]
            return EvalResult({field: _semver_text(v) if field == "version" else v}, None, reads)
        if t.startswith("LIST"):
            items = list(v)
            if not items:
                # 1.37: an attribute with an empty string list (no value: no constraint takes it); 1.38 keeps the
                # empty []string, an empty set where constraints compare sets (allocator/constraints.py)
                return EvalResult({"strings": [], DERIVED_EMPTY_LIST: True}, None, reads)
            kinds = [i.type().name() for i in items]
            first = kinds[0]
            if first not in _SCALAR:
                return EvalResult(None, f"unsupported list element type: {_go_type(first)}", reads)
            for n, k in enumerate(kinds):
                if k != first:
                    want = {"BOOL": "bool", "INT": "int", "STRING": "string", "kubernetes.Semver": "semver"}[first]
                    return EvalResult(
                        None, f"expected list element at index {n} to be {want}, got {_go_type(k)}", reads
                    )
            field = _SCALAR[first] + "s"
            vals = [_semver_text(i.value()) if first == "kubernetes.Semver" else i.value() for i in items]
            return EvalResult({field: vals}, None, reads)
        return EvalResult(None, f"unsupported CEL return type: {_go_type(t, result_type_name(value))}", reads)


def _go_type(cel_type: str, fallback: str = "") -> str:
    return (
        _GO_TYPE.get(cel_type)
        or {"BOOL": "bool", "INT": "int64", "STRING": "string"}.get(cel_type)
        or (fallback or cel_type)
    )
