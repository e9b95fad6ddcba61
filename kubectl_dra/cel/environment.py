"""Kubernetes' DRA CEL environment ("stored expressions") on cel-cpp (``cel-expr-python``).

See README.md next to this file for what is exact and what differs from cel-go.
"""

from __future__ import annotations

import threading
from typing import Any

from kubectl_dra.runtime import IdMemo, is_long_running

from ._common import CelCompileError
from ._compile import check_length
from ._device import LISTS, SCALARS, quantity_encoded, semver_canonical, split_name, version_error
from ._engine import Engine, engine_for
from ._selector import CompiledSelector

# ------------------------------------------------------------------------------ environment
_PLAIN = frozenset(("int", "bool", "string"))  # scalar attribute types that always convert


def _converted_value_ok(attr: Any) -> bool:
    """1.38 attrValue does not return nil: the first set scalar (int, bool, string, version) converts,
    or else the first non-empty list does."""
    if not isinstance(attr, dict):
        return False
    for k in SCALARS:
        v = attr.get(k)
        if v is not None:
            return k != "version" or version_error(v) is None
    for k in LISTS:
        v = attr.get(k)
        if v:
            return k != "versions" or all(version_error(x) is None for x in v)
    return False


# (version, list_attributes) -> attributes map -> its conversion verdict; see conversion_error
_CONVERSION_VERDICTS: dict[tuple, IdMemo] = {}
_CONVERSIONS_KEPT = 65536
_MISSING = object()


class CelEnvironment:
    """The DRA selector environment of one Kubernetes minor version.

    version: (1, 34) .. (1, 38).  list_attributes: the DRAListTypeAttributes gate (only matters for
    1.36; 1.37 and 1.38 always convert list attributes, 1.34/1.35 never do).

    1.38 converts attributes once per slice and serves them lazily: an invalid attribute fails only
    the expressions that touch it (see README.md), so ``conversion_error`` is always None there.
    """

    def __init__(self, version: tuple[int, int] | str = (1, 36), list_attributes: bool = False):
        if isinstance(version, str):
            version = tuple(int(p) for p in version.lstrip("v").split(".")[:2])
        version = tuple(int(p) for p in version)[:2]
        if version < (1, 34) or version > (1, 38):
            raise ValueError(f"unsupported Kubernetes version {version}; expected 1.34..1.38")
        self.version = version
        self.list_attributes = version >= (1, 37) or (version == (1, 36) and bool(list_attributes))
        self.includes = version >= (1, 36)
        self.no_such_key_hint = version >= (1, 37)
        # 1.38: draapi conversion + lazy attribute proxies (per-attribute errors, qualified names win,
        # scalars before lists) and CIDR library v1 (isMask)
        self.lazy_attributes = version >= (1, 38)
        self._selectors: dict[str, CompiledSelector] = {}
        self._lock = threading.Lock()
        self._engine: Engine | None = None
        # device object -> its activation; turned per answer under -w (runtime.next_evaluation), so a kept
        # environment (environment_for) does not keep the devices of slices the watch has since replaced
        self._act_cache = IdMemo(_ACTIVATIONS_KEPT)
        # shared by the environments of one version: a live gather computes the verdicts while the lists arrive
        key = (self.version, self.list_attributes)
        memo = _CONVERSION_VERDICTS.get(key)
        self._conv_cache = memo if memo is not None else _CONVERSION_VERDICTS.setdefault(key, IdMemo(_CONVERSIONS_KEPT))
        self.activations_built = 0

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            # 1.37 vendors a newer cel-go (string/list extension edge cases differ); 1.38 adds isMask
            self._engine = engine_for(
                self.includes, self.version == (1, 36), self.version >= (1, 37), self.version >= (1, 38)
            )
        return self._engine

    def compile(self, expression: str, derived: bool = False) -> "CompiledSelector":
        """A selector (CelCompileError as cel.Cache.GetOrCompile reports it), or with derived a derived attribute's
        expression (GetOrCompileDerivedAttribute: another output type, cached apart: _derived.py)."""
        if derived:
            return self._compile_derived(expression)
        sel = self._selectors.get(expression)
        if sel is None:
            try:
                check_length(expression)  # before the engine is built: too long or empty needs no engine
                sel = CompiledSelector(  # raises CelCompileError
                    expression,
                    self.engine,
                    list_attributes=self.list_attributes,
                    lazy_attributes=self.lazy_attributes,
                    no_such_key_hint=self.no_such_key_hint,
                    conversion_error=self.conversion_error,
                    activation=self._activation,
                    invalid_attributes=self.invalid_attributes,
                )
            except CelCompileError as e:
                if self.version >= (1, 38) and e.exact:
                    # cel-go v0.33: no "(in container '')", "did you mean" suggestions
                    from ._catalog import undeclared_references_v033

                    raise CelCompileError(undeclared_references_v033(e.message, expression)) from None
                raise
            with self._lock:
                self._selectors.setdefault(expression, sel)
                sel = self._selectors[expression]
        return sel

    def _compile_derived(self, expression: str):
        from ._derived import CompiledDerived

        key = "derived:" + expression
        sel = self._selectors.get(key)
        if sel is None:
            check_length(expression)
            sel = CompiledDerived(
                expression,
                self.engine,
                list_attributes=self.list_attributes,
                lazy_attributes=self.lazy_attributes,
                no_such_key_hint=False,  # EvaluateDerivedAttribute's errors are not EnhanceRuntimeError'd
                conversion_error=self.conversion_error,
                activation=self._activation,
                invalid_attributes=self.invalid_attributes,
            )
            with self._lock:
                self._selectors.setdefault(key, sel)
                sel = self._selectors[key]
        return sel

    # -- device -> engine activation (cached per device object; at most once per device)
    def conversion_error(self, device: dict) -> str | None:
        """Whether converting the device's attributes fails (then every selector fails on it; never in
        1.38, which fails only the expressions that touch an invalid value, see invalid_attributes).
        The verdict is cached per attributes object, for every environment of this version (prepare_conversions);
        the entry holds that object, so a recycled id() can never match a different one."""
        attrs = device.get("attributes")
        if not attrs or self.lazy_attributes:
            return None
        hit = self._conv_cache.get(attrs, _MISSING)
        if hit is not _MISSING:
            return hit
        verdict = self._attributes_error(attrs)
        self._conv_cache.put(attrs, verdict)
        return verdict

    def prepare_conversions(self, devices) -> bool:
        """The conversion verdicts of these devices, computed now (while a live gather waits for the rest of its
        lists) for the analysis that follows; False once the cache is full, when more would only push out the
        first (then the analysis computes the rest itself)."""
        if self.lazy_attributes:
            return False
        for d in devices:
            if len(self._conv_cache) >= _CONVERSIONS_KEPT - 1:
                return False
            self.conversion_error(d)
        return True

    def _attributes_error(self, attrs: dict) -> str | None:
        lists = self.list_attributes
        for name, attr in attrs.items():
            if not isinstance(attr, dict):
                return f"attribute {name}: unsupported attribute value"
            if len(attr) == 1:  # the usual shape, decided without the general walk below (same verdicts)
                ((k, v),) = attr.items()
                if v is not None:
                    if k in _PLAIN:
                        continue
                    if k == "version":
                        err = version_error(v)
                        if err:
                            return f"attribute {name}: {err}"
                        continue
                    if k in LISTS and lists:
                        if k == "versions":
                            for x in v:
                                err = version_error(x)
                                if err:
                                    return f"attribute {name}: {err}"
                        continue
                    if k not in LISTS:
                        return f"attribute {name}: unsupported attribute value"
            if lists:
                for k in LISTS:
                    if attr.get(k) is not None:
                        if k == "versions":
                            for v in attr[k]:
                                err = version_error(v)
                                if err:
                                    return f"attribute {name}: {err}"
                        break
                if any(attr.get(k) is not None for k in LISTS):
                    continue
            for k in SCALARS:
                if attr.get(k) is not None:
                    if k == "version":
                        err = version_error(attr[k])
                        if err:
                            return f"attribute {name}: {err}"
                    break
            else:
                return f"attribute {name}: unsupported attribute value"
        return None

    # -- 1.38: draapi conversion (k8s.io/dynamic-resource-allocation/api/conversion.go)
    def invalid_attributes(self, device: dict) -> frozenset:
        """1.38: the (domain, id) pairs whose value did not convert (nil in draapi: an unparsable version,
        only empty lists, no value), after a fully-qualified name has won over the same plain name.  Cached
        per attributes object like the conversion verdict."""
        attrs = device.get("attributes")
        if not attrs:
            return frozenset()
        hit = self._conv_cache.get(attrs)
        if hit is not None:
            return hit
        driver = device.get("driver") or ""
        values: dict[tuple[str, str], bool] = {}
        for name, attr in attrs.items():
            key = split_name(name, driver)
            if "/" not in name and key in values:
                continue  # the fully-qualified spelling wins (conversion.go)
            values[key] = _converted_value_ok(attr)
        verdict = frozenset(k for k, ok in values.items() if not ok)
        self._conv_cache.put(attrs, verdict)
        return verdict

    def _lazy_value(self, attr: Any, ident: str) -> Any:
        """attrValue: scalars before lists, a list only when it is not empty, nil -> the stand-in."""
        eng = self.engine
        if isinstance(attr, dict):
            for k in SCALARS:
                v = attr.get(k)
                if v is not None:
                    if k == "version":
                        if version_error(v) is not None:
                            break
                        return eng.S(v=semver_canonical(v))
                    if k == "int":
                        return int(v)
                    if k == "bool":
                        return bool(v)
                    return str(v)
            else:
                for k in LISTS:
                    v = attr.get(k)
                    if v:
                        if k == "versions":
                            if any(version_error(x) is not None for x in v):
                                break
                            return [eng.S(v=semver_canonical(x)) for x in v]
                        if k == "ints":
                            return [int(x) for x in v]
                        if k == "bools":
                            return [bool(x) for x in v]
                        return [str(x) for x in v]
        return eng.INVALID(v=ident)

    def attribute_value(self, attr: dict) -> Any:
        eng = self.engine
        if self.list_attributes:
            for k in LISTS:
                v = attr.get(k)
                if v is not None:
                    if k == "versions":
                        return [eng.S(v=semver_canonical(x)) for x in v]
                    if k == "ints":
                        return [int(x) for x in v]
                    if k == "bools":
                        return [bool(x) for x in v]
                    return [str(x) for x in v]
        for k in SCALARS:
            v = attr.get(k)
            if v is not None:
                if k == "version":
                    return eng.S(v=semver_canonical(v))
                if k == "int":
                    return int(v)
                if k == "bool":
                    return bool(v)
                return str(v)
        raise ValueError("unsupported attribute value")

    def _activation(self, device: dict) -> Any:
        hit = self._act_cache.get(device)
        if hit is not None:
            return hit
        eng = self.engine
        driver = device.get("driver") or ""
        lazy = self.lazy_attributes
        attributes: dict[str, dict[str, Any]] = {}
        for name, attr in (device.get("attributes") or {}).items():
            domain, ident = split_name(name, driver)
            inner = attributes.setdefault(domain, {})
            if lazy:
                if "/" not in name and ident in inner:
                    continue  # 1.38: the fully-qualified spelling wins
                inner[ident] = self._lazy_value(attr, ident)
            else:
                inner[ident] = self.attribute_value(attr)
        capacity: dict[str, dict[str, Any]] = {}
        for name, cap in (device.get("capacity") or {}).items():
            domain, ident = split_name(name, driver)
            inner = capacity.setdefault(domain, {})
            if lazy and "/" not in name and ident in inner:
                continue
            raw = cap.get("value") if isinstance(cap, dict) else cap
            inner[ident] = eng.Q(v=quantity_encoded(str(raw)))
        act = eng.env.Activation(
            {
                "device.driver": driver,
                "device.attributes": attributes,
                "device.capacity": capacity,
                "device.allowMultipleAllocations": bool(device.get("allowMultipleAllocations") or False),
            }
        )
        self.activations_built += 1
        self._act_cache.put(device, act)
        return act


_ACTIVATIONS_KEPT = 4096
# -w: the environment of each (version, list_attributes), kept across answers (environment_for)
_KEPT: dict[tuple, CelEnvironment] = {}
_KEPT_SELECTORS = 1024  # distinct expressions a kept environment compiles; then it starts afresh


def environment_for(version: tuple[int, int], list_attributes: bool) -> CelEnvironment:
    """A new environment, or under -w (runtime.is_long_running) the one kept for this version across answers.

    Why it is kept: cel-expr-python 0.1.3 never releases the arguments it passes to a function implemented in
    Python (the Kubernetes libraries: a quantity's compareTo, semver, isGreaterThan, ...) nor what the function
    returns (py_cel_function.cc, PyCelFunctionAdapter::Invoke: no Py_DECREF of py_args or of the result; fixed
    upstream after 0.1.3). Each such call leaks a tuple and the values converted for it (a Quantity message: about
    0.8 kB). A one-shot command makes few calls (one per selector and distinct values read: the compiled selector's
    memo) and exits; -w made them again at every answer, with a new environment and so new memos: +6 Quantity
    messages an answer on the realistic dump, about 5 kB (docs/performance.md, "Watch"). With the
    environment kept, its compiled selectors and their memos (by the values an expression reads, valid for any
    snapshot) make a call only for values never seen before."""
    if not is_long_running():
        return CelEnvironment(version, list_attributes)
    key = (tuple(version), bool(list_attributes))
    env = _KEPT.get(key)
    if env is None or len(env._selectors) >= _KEPT_SELECTORS:
        env = _KEPT[key] = CelEnvironment(version, list_attributes)
    return env
