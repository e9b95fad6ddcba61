"""One compiled selector expression and its evaluation against a device.  The other jobs are in their own modules:
compiling and repairing (_compile.py), cel-go's compile-time checks (_checks.py), what the expression reads and
costs (_analysis.py), the source that runs (_rewrite.py) and the memo key (_memo.py)."""

from __future__ import annotations

from typing import Any, Callable

from kubectl_dra import quantity as qlib

from . import _analysis, _memo
from . import _semver as slib
from ._common import (
    COST_EXCEEDED,
    COST_LIMIT,
    ENGINE_LIMIT,
    MAX_VALUE_SIZE,
    CelCompileError,
    EvalResult,
)
from ._compile import compile_source
from ._engine import Engine
from ._memo import from_cel_device, raw_attr
from ._messages import bool_conversion_error, celgo_type_name, result_type_name, runtime_message
from ._rewrite import guarded_programs, proxy_equality, run_programs
from ._source import tokenize

GUARD_LIMIT = (
    "kubectl-dra: the expression reads a device attribute whose value is invalid, in a form the local CEL "
    "engine cannot check; Kubernetes' result is unknown"
)


class CompiledSelector:
    """One compiled selector; ``evaluate(device)`` memoises on the values the expression reads.

    Built by CelEnvironment.compile (after _compile.check_length), which passes in what the selector needs of it:
    the engine, the version's flags, and per device the conversion verdict (conversion_error), the engine's
    activation (activation) and 1.38's invalid attribute values (invalid_attributes)."""

    def __init__(
        self,
        expression: str,
        engine: Engine,
        *,
        list_attributes: bool,
        lazy_attributes: bool,
        no_such_key_hint: bool,
        conversion_error: Callable[[dict], str | None],
        activation: Callable[[dict], Any],
        invalid_attributes: Callable[[dict], frozenset],
    ):
        self.expression = expression
        self.evaluations = 0  # real engine evaluations (for tests / measurements)
        self._memo: dict[Any, EvalResult] = {}
        self._engine = eng = engine
        self._lazy_attributes = lazy_attributes
        self._no_such_key_hint = no_such_key_hint
        self._activation = activation
        self._invalid_attributes = invalid_attributes
        checked, checked_src, toks, edits = compile_source(eng, expression, list_attributes)
        rt = checked.return_type()
        from ._ast import decode_serialized

        try:
            ast = decode_serialized(checked.serialize())
        except Exception as e:  # pragma: no cover - defensive
            raise CelCompileError(f"compilation failed: cannot analyse expression: {e}") from None
        from ._checks import static_checks

        static_checks(ast, checked_src, list_attributes)
        self._check_result_type(rt, ast, eng, list_attributes)
        plan = _analysis.plan_reads(ast.expr)
        from ._checks import range_attributes

        self._range_attrs = range_attributes(ast)
        self.plan = plan
        pessimistic = _analysis.CostEstimator(list_attributes)
        self.estimated_cost = pessimistic.estimate(ast.expr)
        self.optimistic_cost = _analysis.CostEstimator(list_attributes, optimistic=True).estimate(ast.expr)
        self.max_size = pessimistic.max_size
        # Refuse up front what Kubernetes would cancel anyway and what could exhaust memory here;
        # everything else runs natively, where cel-cpp's iteration budget bounds the time.
        self.over_budget = self.optimistic_cost > COST_LIMIT or self.max_size > MAX_VALUE_SIZE
        toks2 = tokenize(checked_src) if edits else toks
        self._checked_src, self._ast = checked_src, ast
        self._guard: tuple | None = None  # 1.38: the programs for devices with invalid attribute values
        base = (checked_src, checked, ast, plan.rewrite_index_ids, toks2, frozenset())
        if lazy_attributes:
            base = proxy_equality(eng, base)
        self._program, self.run_source, self._lazy_program, lazy_source = run_programs(eng, *base)
        if lazy_source is not None:
            self.lazy_source = lazy_source
        self.raw_key = _memo.make_key_fn(plan)
        self._conversion_error = conversion_error
        self._key_fn = from_cel_device(self.raw_key)
        # read_key(device): the values the expression can read of the device; devices with equal keys (and no
        # attribute that fails conversion, see CelEnvironment.conversion_error) get equal results.  In 1.38 an
        # invalid value fails only what touches it; the key holds the raw value of every attribute the
        # expression can read, so an invalid value never shares a key with a valid one.
        self._reads_all = plan.attr_all
        self._reads_domains = frozenset(plan.attr_domains)
        self._reads_keys = frozenset(plan.attr_keys)
        self.read_key = self._key_fn

    @staticmethod
    def _check_result_type(rt, ast, eng, list_attributes: bool) -> None:
        """validateOutputType for a selector: bool, or the attribute type (raises CelCompileError)."""
        if not rt == eng.BOOL:
            from ._checks import attribute_derived

            # attribute values are cel-go's AnyType (accepted); other dyn results are accepted only
            # when list attributes make the attribute type DynType (1.36 with the gate, 1.37)
            ok = rt.name() == "DYN" and (list_attributes or attribute_derived(ast.expr))
            if not ok:
                raise CelCompileError(f"must evaluate to bool or the unknown type, not {celgo_type_name(rt.name())}")

    def _guarded_programs(self) -> tuple:
        """1.38: (program, lazy-bind program) of the guarded source (_lazy.py), built on first need;
        (None, None) when the rewrite is not possible."""
        if self._guard is None:
            program, lazy_program, source = guarded_programs(self._engine, self._ast, self._checked_src)
            if source is not None:
                self.guarded_source = source
            self._guard = (program, lazy_program)
        return self._guard

    merged_read_key = staticmethod(_memo.merged_read_key)

    def _iterable_error(self, device: dict) -> str:
        """cel-go: "got '<Go type>', expected iterable type" (the type is found from the attribute
        being iterated when that is statically known)."""
        gotype = "unknown"
        driver = device.get("driver") or ""
        attrs = device.get("attributes") or {}
        for d, i in self._range_attrs:
            raw = raw_attr(attrs, driver, d, i)
            if isinstance(raw, dict):
                for k, name in (
                    ("string", "types.String"),
                    ("int", "types.Int"),
                    ("bool", "types.Bool"),
                    ("version", "cel.Semver"),
                ):
                    if raw.get(k) is not None:
                        gotype = name
                        break
                if gotype != "unknown":
                    break
        return f"got '{gotype}', expected iterable type"

    def reads(self, device: dict) -> tuple:
        return _memo.reads(self.plan, device, self._lazy_attributes)

    def evaluate(self, device: dict) -> EvalResult:
        conv = self._conversion_error(device)
        if conv is not None:
            return EvalResult(None, conv, ())
        key = self._key_fn(device)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        res = self._evaluate(device)
        if len(self._memo) < 65536:
            self._memo[key] = res
        return res

    def _evaluate(self, device: dict) -> EvalResult:
        reads = self.reads(device)
        if self.over_budget:
            return EvalResult(None, COST_EXCEEDED, reads)
        try:
            act = self._activation(device)
        except (qlib.QuantityError, slib.SemverError, ValueError, TypeError) as e:
            return EvalResult(None, f"invalid device: {e}", reads)
        program, lazy_program = self._program, self._lazy_program
        if self._lazy_attributes and self._may_touch_invalid(device):
            program, lazy_program = self._guarded_programs()
            if program is None:
                return EvalResult(None, GUARD_LIMIT, reads, exact=False)
        self.evaluations += 1
        res = self._run(program, act, device, reads)
        if res.error is not None and lazy_program is not None:
            # cel.bind initialisers were evaluated eagerly by the map form; Kubernetes evaluates them
            # only where used, so an error is re-checked with the inlined (lazy) form
            res = self._run(lazy_program, act, device, reads)
        return res

    def _may_touch_invalid(self, device: dict) -> bool:
        """1.38: whether the device has an invalid attribute value this expression can read."""
        bad = self._invalid_attributes(device)
        if not bad:
            return False
        if self._reads_all:
            return True
        domains, keys = self._reads_domains, self._reads_keys
        return any(d in domains or (d, i) in keys for d, i in bad)

    def _run(self, program, act, device: dict, reads: tuple) -> EvalResult:
        try:
            value = program.eval(act)
        except Exception as e:  # engine conversion failures become runtime errors
            if "Iteration budget exceeded" in str(e):
                # the abort is global like Kubernetes' cancellation; which one applies depends on
                # whether Kubernetes' cost could stay within its limit
                if self.estimated_cost > COST_LIMIT:
                    return EvalResult(None, COST_EXCEEDED, reads)
                return EvalResult(None, ENGINE_LIMIT, reads, exact=False)
            return EvalResult(None, runtime_message(str(e), self._no_such_key_hint), reads)
        t = value.type()
        eng = self._engine
        if t == eng.BOOL:
            return EvalResult(bool(value.value()), None, reads)
        if t == eng.ERROR:
            raw = str(value.value())
            if raw.endswith("No matching overloads found : <iter_range>"):
                return EvalResult(None, self._iterable_error(device), reads)
            return EvalResult(None, runtime_message(raw, self._no_such_key_hint), reads)
        return self._other_result(value, reads)

    def _other_result(self, value, reads: tuple) -> EvalResult:
        """A result that is neither bool nor an error: a selector's fails its conversion to bool."""
        tn = result_type_name(value)
        return EvalResult(
            None, f"CEL result of type {tn} could not be converted to bool: {bool_conversion_error(tn)}", reads
        )
