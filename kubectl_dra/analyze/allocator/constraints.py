"""Claim constraints (upstream: constraint.go): matchAttribute and distinctAttribute, per minor and channel."""

from __future__ import annotations

from kubectl_dra.analyze.allocator.checks import (
    UnsupportedAttribute,
    _attr_set,
    attribute_value,
    converted_value,
    lookup_attribute,
)
from kubectl_dra.analyze.allocator.derived import NOT_DERIVED
from kubectl_dra.cel import DERIVED_EMPTY_LIST

_MISSING = object()


class _Constraint:
    # lookupAttribute's derived half (derived.py DerivedValues.provider) for the request being added: set by
    # allocateDevice before add(); None when the request defines no derived attributes
    derive = None

    def __init__(self, request_names: set, attribute: str):
        self.request_names = request_names
        self.attribute = attribute

    def _attr(self, d, did):
        """The device's attribute of this name: the request's derived attribute where it defines one (evaluated on
        the device, errors abort), else the device's own (None without it)."""
        if self.derive is not None:
            hit = self.derive(self.attribute, d, did)
            if hit is not NOT_DERIVED:
                return hit
        return lookup_attribute(d, did[0], self.attribute)

    def state(self) -> tuple:
        """A hashable snapshot of what add() reads (see _Run._boundary_state)."""
        raise NotImplementedError

    def lookup(self, d, did):
        """The device's value for the constraint: _MISSING without the attribute, else attribute_value (None when no
        scalar is set). The 1.38 classes below read the converted value instead."""
        attr = self._attr(d, did)
        return _MISSING if attr is None else attribute_value(attr)

    def lookup_set(self, d, did):
        """The device's value as a set (list-typed attributes): _MISSING without the attribute, None unusable."""
        attr = self._attr(d, did)
        return _MISSING if attr is None else _attr_set(attr)

    def applies(self, base: str, sub: str) -> bool:
        if not self.request_names:
            return True
        if not sub:
            return base in self.request_names
        return base in self.request_names or f"{base}/{sub}" in self.request_names


class _MatchAttribute(_Constraint):
    def __init__(self, request_names, attribute):
        super().__init__(request_names, attribute)
        self.value = None
        self.num = 0

    def add(self, base, sub, d, did) -> bool:
        if not self.applies(base, sub):
            return True
        v = self.lookup(d, did)
        if v is _MISSING:
            return False
        if self.num == 0:
            self.value, self.num = v, 1
            return True
        if v is None or self.value is None or v != self.value:
            return False
        self.num += 1
        return True

    def remove(self, base, sub, d, did) -> None:
        if self.applies(base, sub):
            self.num -= 1

    def state(self) -> tuple:
        return self.value, self.num


class _DistinctAttribute(_Constraint):
    """Upstream quirk kept on purpose: values are remembered per request name, overwritten per device."""

    def __init__(self, request_names, attribute):
        super().__init__(request_names, attribute)
        self.values: dict[str, tuple] = {}
        self.num = 0

    def add(self, base, sub, d, did) -> bool:
        if not self.applies(base, sub):
            return True
        attr = self._attr(d, did)
        if attr is None:
            return False
        v = attribute_value(attr)
        if self.num == 0:
            self.values[base] = v
            self.num = 1
            return True
        if v is None:
            return False
        for other in self.values.values():
            if other is not None and other == v:
                return False
        self.values[base] = v
        self.num += 1
        return True

    def remove(self, base, sub, d, did) -> None:
        if self.applies(base, sub):
            self.values.pop(base, None)
            self.num -= 1

    def state(self) -> tuple:
        return tuple(self.values.items()), self.num


class _DistinctAttributePointers(_DistinctAttribute):
    """1.34 compares the attribute *pointers* (attribute.IntValue == attr.IntValue, fixed in 1.35 to
    compare values): only the very same device's attribute counts as a duplicate, i.e. a shareable
    device picked twice. Identity of the attribute object plays the pointer here."""

    def add(self, base, sub, d, did) -> bool:
        if not self.applies(base, sub):
            return True
        attr = self._attr(d, did)
        if attr is None:
            return False
        if self.num and any(other is attr for other in self.values.values()):
            return False
        self.values[base] = attr
        self.num += 1
        return True

    def state(self) -> tuple:
        # the identity of the attribute object plays the pointer
        return tuple((k, id(v)) for k, v in self.values.items()), self.num


class _DistinctAttributeAll(_Constraint):
    """1.37: every affected device is compared with every device added before it."""

    def __init__(self, request_names, attribute):
        super().__init__(request_names, attribute)
        self.values: list = []

    def add(self, base, sub, d, did) -> bool:
        if not self.applies(base, sub):
            return True
        v = self.lookup(d, did)
        if v is _MISSING:
            return False
        if self.values and (v is None or any(other is not None and other == v for other in self.values)):
            return False
        self.values.append(v)
        return True

    def remove(self, base, sub, d, did) -> None:
        if self.applies(base, sub):
            self.values.pop()

    def state(self) -> tuple:
        return tuple(self.values)


class _MatchAttributeSet(_Constraint):
    """DRAListTypeAttributes (1.37): the values of all devices must have a non-empty intersection;
    a stack of intersections so that remove() restores the previous one."""

    def __init__(self, request_names, attribute):
        super().__init__(request_names, attribute)
        self.stack: list[tuple[str, frozenset]] = []

    def add(self, base, sub, d, did) -> bool:
        if not self.applies(base, sub):
            return True
        new = self.lookup_set(d, did)
        if new is _MISSING or new is None:
            return False
        if self.stack:
            kind, values = self.stack[-1]
            if kind != new[0] or not (values & new[1]):
                return False
            new = (kind, values & new[1])
        self.stack.append(new)
        return True

    def remove(self, base, sub, d, did) -> None:
        if self.applies(base, sub):
            self.stack.pop()

    def state(self) -> tuple:
        return tuple(self.stack)


class _DistinctAttributeSet(_Constraint):
    """DRAListTypeAttributes (1.37): the values of the devices must be pairwise disjoint."""

    def __init__(self, request_names, attribute):
        super().__init__(request_names, attribute)
        self.values: list[tuple[str, frozenset] | None] = []

    def add(self, base, sub, d, did) -> bool:
        if not self.applies(base, sub):
            return True
        new = self.lookup_set(d, did)
        if new is _MISSING or new is None:
            return False
        if any(old is not None and old[0] == new[0] and old[1] & new[1] for old in self.values):
            return False
        self.values.append(new)
        return True

    def remove(self, base, sub, d, did) -> None:
        if self.applies(base, sub):
            self.values.pop()

    def state(self) -> tuple:
        return tuple(self.values)


class _Converted:
    """1.38 (Behaviour.attributes_converted_once): a constraint reads the value the slice's conversion kept
    (checks.converted_value, never None); an unusable one raises UnsupportedAttribute, which aborts the allocation."""

    def _converted(self, d, did, as_sets: bool):
        attr = self._attr(d, did)
        if attr is None:
            return _MISSING
        if as_sets and attr.get(DERIVED_EMPTY_LIST):  # a derived []string{}: attributeAsSet makes it an empty set
            return "string", frozenset()
        try:
            return converted_value(attr, as_sets)
        except UnsupportedAttribute:
            raise UnsupportedAttribute(
                f"device {'/'.join(did)}: unsupported attribute value for {self.attribute}"
            ) from None

    def lookup(self, d, did):
        return self._converted(d, did, False)

    def lookup_set(self, d, did):
        return self._converted(d, did, True)


class MatchAttribute138(_Converted, _MatchAttribute):
    """matchAttribute (1.38 without ListTypeAttributes): equal type and value (versions as semver)."""


class DistinctAttribute138(_Converted, _DistinctAttributeAll):
    """distinctAttribute (1.38): every device differs from every device added before it."""


class MatchAttributeSet138(_Converted, _MatchAttributeSet):
    """matchAttribute with ListTypeAttributes (1.38 incubating/experimental): a non-empty intersection."""


class DistinctAttributeSet138(_Converted, _DistinctAttributeSet):
    """distinctAttribute with ListTypeAttributes (1.38 incubating/experimental): pairwise disjoint values."""
