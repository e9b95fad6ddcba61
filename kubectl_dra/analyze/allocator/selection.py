"""Selector evaluation with the Kubernetes CEL environment, shared with the explanation matrix (upstream:
isSelectable, selectorsMatch)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubectl_dra.analyze.allocator.common import DeviceID
from kubectl_dra.features import Semantics


@dataclass
class MatrixCache:
    """What the device matrix (analyze/devices/checks.py) computes once per selector list and keeps with the
    evaluator that compiled them: keyed by id() of the lists, which `keep` holds so that no id is reused while
    cached."""

    read_plans: dict = field(default_factory=dict)  # id(selectors) -> their compiled forms, or None
    keyers: dict = field(default_factory=dict)  # ids of selector lists -> entry -> what they can see of a device
    shapes: dict = field(default_factory=dict)  # id(selectors) -> device shape -> result
    capacity_demand: dict = field(default_factory=dict)  # id(capacity requests) -> demand
    verdicts: dict = field(default_factory=dict)  # the per-device check verdicts (checks.py)
    keep: dict = field(default_factory=dict)


class SelectorEvaluator:
    """Compiles each expression once and evaluates it per device, caching by (expression, device)."""

    def __init__(self, sem: Semantics, cel_env=None):
        self.sem = sem
        self._env = cel_env
        self._compiled: dict[str, Any] = {}
        self._cel_inputs: dict[int, tuple[dict, dict]] = {}  # id(device) -> (device, its CEL input)
        # id(device) -> (device, {expression: result}): the allocator asks again for every node a queue's pods try,
        # and the compiled selector's own memo (by the values read) costs a key per call
        self._results: dict[int, tuple[dict, dict]] = {}
        self.inexact: set[str] = set()  # expressions Kubernetes accepts but the local engine cannot run
        self.matrix = MatrixCache()  # the device matrix's per-selector-list plans (analyze/devices/checks.py)

    @property
    def env(self):
        if self._env is None:
            from kubectl_dra.cel.environment import environment_for

            self._env = environment_for(self.sem.version, self.sem.list_attributes)
        return self._env

    def compile(self, expression: str):
        """Returns (compiled, None) or (None, compile error text)."""
        hit = self._compiled.get(expression)
        if hit is None:
            from kubectl_dra.cel import CelCompileError

            try:
                hit = (self.env.compile(expression), None)
            except CelCompileError as e:
                hit = (None, str(e))
                if not getattr(e, "exact", True):
                    self.inexact.add(expression)
            self._compiled[expression] = hit
        return hit

    def cel_device(self, did: DeviceID, device: dict) -> dict:
        """CEL's view of the device, built once per device object: two slices of an invalid pool can publish one
        device ID with different attributes, so the ID alone is not the key (the entry holds the object, so its
        id() cannot be reused while cached)."""
        hit = self._cel_inputs.get(id(device))
        d = hit[1] if hit is not None and hit[0] is device else None
        if d is None:
            d = {
                "driver": did[0],
                "name": did[2],
                "attributes": device.get("attributes") or {},
                "capacity": device.get("capacity") or {},
                # stable (all versions) and 1.34/1.35 incubating build cel.Device without this field.
                "allowMultipleAllocations": self.sem.behaviour.cel_sees_multi_allocations
                and bool(device.get("allowMultipleAllocations")),
            }
            self._cel_inputs[id(device)] = (device, d)
        return d

    def result(self, compiled, expression: str, did: DeviceID, device: dict):
        """compiled (of expression).evaluate on the device, once per device object and expression (a selector's
        result depends on the device and the expression only: its cost limit is decided at compile time)."""
        per = self._results.get(id(device))
        if per is None or per[0] is not device:
            per = self._results[id(device)] = (device, {})
        hit = per[1].get(expression)
        if hit is None:
            hit = per[1][expression] = compiled.evaluate(self.cel_device(did, device))
        return hit

    def evaluate(self, expression: str, did: DeviceID, device: dict):
        """Returns an EvalResult-like object (value, error, reads) or raises nothing; compile errors
        come back as (None, error) via .compile()."""
        compiled, err = self.compile(expression)
        if compiled is None:
            return None
        return compiled.evaluate(self.cel_device(did, device))


def selector_expression(sel: dict) -> str | None:
    cel = sel.get("cel")
    if not cel:
        return None
    return cel.get("expression")


def taint_rule_select(ev: SelectorEvaluator, classes: dict, gaps: dict):
    """The select of apply_taint_rules for 1.34's DeviceTaintRule selectors (v1alpha3): a device is tainted only
    when the named DeviceClass exists and its CEL selectors, then the rule's own, all match it (a runtime error
    is no match; the tracker's device view has driver, attributes and capacity). An expression that does not
    compile, or that the local engine cannot run, makes the tracker's answer unknowable (upstream: the slice
    update fails and the scheduler keeps its previous view): gaps gets rule name -> why, and the device counts as
    untainted. upstream: resourceslice/tracker/tracker.go applyPatches (v0.34)."""

    def select(rule: dict, spec: dict, device: dict) -> bool:
        sel = (rule.get("spec") or {}).get("deviceSelector") or {}
        exprs = []
        if sel.get("deviceClassName") is not None:
            cls = classes.get(sel["deviceClassName"])
            if cls is None:
                return False  # "DeviceTaintRule does not apply, DeviceClass does not exist"
            exprs += [selector_expression(s) for s in (cls.get("spec") or {}).get("selectors") or []]
        exprs += [selector_expression(s) for s in sel.get("selectors") or []]
        view = {
            "driver": spec.get("driver", ""),
            "name": device.get("name", ""),
            "attributes": device.get("attributes") or {},
            "capacity": device.get("capacity") or {},
            "allowMultipleAllocations": False,
        }
        for expr in exprs:
            if expr is None:
                continue
            compiled, err = ev.compile(expr)
            if compiled is None:
                gaps.setdefault(_rule_name(rule), f"selector {expr!r}: {str(err).splitlines()[0]}")
                return False
            res = compiled.evaluate(view)
            if res.error is not None and not getattr(res, "exact", True):
                gaps.setdefault(_rule_name(rule), f"selector {expr!r}: {str(res.error).splitlines()[0]}")
                return False
            if res.error is not None or res.value is not True:
                return False
        return True

    return select


def _rule_name(rule: dict) -> str:
    return (rule.get("metadata") or {}).get("name", "")
