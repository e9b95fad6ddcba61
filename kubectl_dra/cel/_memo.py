"""The memo key of a compiled selector: the values the expression reads of a device (driver, literal attribute and
capacity keys, the raw value with every field an attribute sets; whole maps when read dynamically), so that devices
with equal keys get equal results; and those reads as the result reports them."""

from __future__ import annotations

from typing import Any

from ._device import MISSING, split_name


def raw_attr(attrs: dict, driver: str, domain: str, ident: str) -> Any:
    v = attrs.get(f"{domain}/{ident}")
    if v is None and domain == driver:
        v = attrs.get(ident)
    return v


def _attr_key(attr: Any) -> Any:
    """Hashable, cheap representation of one raw attribute value."""
    if attr is None:
        return MISSING
    if isinstance(attr, dict):
        if len(attr) == 1:
            for k, v in attr.items():
                if v is not None:
                    return (k, tuple(v) if isinstance(v, list) else v)
        else:
            # several fields set: which one counts depends on the version (lists first before 1.38,
            # scalars and non-empty lists in 1.38), so all of them are the key
            items = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in attr.items() if v is not None)
            if items:
                return items
    return repr(attr)


def _plain(attr: Any) -> Any:
    if attr is None:
        return None
    if isinstance(attr, dict):
        for v in attr.values():
            if v is not None:
                return v
    return attr


def _plain_138(attr: Any) -> Any:
    """The raw value 1.38's conversion takes: the first set scalar, else the first non-empty list."""
    if isinstance(attr, dict) and len(attr) > 1:
        for k in ("int", "bool", "string", "version"):
            if attr.get(k) is not None:
                return attr[k]
        for k in ("ints", "bools", "strings", "versions"):
            if attr.get(k):
                return attr[k]
    return _plain(attr)


def from_cel_device(raw_key):
    """read_key(cel_device) from raw_key(driver, multi, attributes, capacity)."""

    def read_key(device: dict) -> tuple:
        return raw_key(
            device.get("driver") or "",
            bool(device.get("allowMultipleAllocations")),
            device.get("attributes") or {},
            device.get("capacity") or {},
        )

    return read_key


def _cap_raw(cap: Any) -> Any:
    if cap is None:
        return None
    if isinstance(cap, dict):
        v = cap.get("value")
        return None if v is None else str(v)
    return str(cap)


# -- memo key: the values the expression reads. raw_key(driver, multi, attributes, capacity) takes the parts of
# a device as published (multi: allowMultipleAllocations as CEL sees it), so the per-device loops need not
# build CEL's view of a device to find its key; read_key(cel_device) is the same key from that view.
def make_key_fn(plan):
    attr_keys = tuple(plan.attr_keys)
    cap_keys = tuple(plan.cap_keys)
    attr_domains = tuple(sorted(plan.attr_domains))
    cap_domains = tuple(sorted(plan.cap_domains))
    need_driver = plan.driver
    need_multi = plan.multi
    attr_all, cap_all = plan.attr_all, plan.cap_all
    if not (attr_all or cap_all or attr_domains or cap_domains):
        return simple_key_fn(need_driver, need_multi, attr_keys, cap_keys)

    def key(driver: str, multi: bool, attrs: dict, caps: dict) -> tuple:
        parts: list = [driver if need_driver else None, multi if need_multi else None]
        if attr_all:
            parts.append(tuple((split_name(n, driver), _attr_key(a)) for n, a in attrs.items()))
        else:
            for d, i in attr_keys:
                parts.append(_attr_key(raw_attr(attrs, driver, d, i)))
            for d in attr_domains:
                parts.append(
                    tuple(
                        sorted(
                            (i2, _attr_key(a))
                            for n, a in attrs.items()
                            for dd, i2 in (split_name(n, driver),)
                            if dd == d
                        )
                    )
                )
        if cap_all:
            parts.append(tuple((split_name(n, driver), _cap_raw(c)) for n, c in caps.items()))
        else:
            for d, i in cap_keys:
                c = caps.get(f"{d}/{i}")
                if c is None and d == driver:
                    c = caps.get(i)
                parts.append(_cap_raw(c))
            for d in cap_domains:
                parts.append(
                    tuple(
                        sorted(
                            (i2, _cap_raw(c)) for n, c in caps.items() for dd, i2 in (split_name(n, driver),) if dd == d
                        )
                    )
                )
        return tuple(parts)

    return key


def merged_read_key(selectors: list):
    """One raw_key for several selectors that read literal keys only: the union of what they read (a key with
    more values only splits the memo further, so each selector's result is still a function of it). None when
    one of them reads whole maps or domains (then each keeps its own raw_key)."""
    plans = [c.plan for c in selectors]
    if any(p.attr_all or p.cap_all or p.attr_domains or p.cap_domains for p in plans):
        return None
    attrs = tuple(dict.fromkeys(k for p in plans for k in p.attr_keys))
    caps = tuple(dict.fromkeys(k for p in plans for k in p.cap_keys))
    return simple_key_fn(any(p.driver for p in plans), any(p.multi for p in plans), attrs, caps)


def simple_key_fn(need_driver: bool, need_multi: bool, attr_keys: tuple, cap_keys: tuple):
    """The memo key when only literal keys are read (the common case), without per-call loops
    over empty read sets; same values as the general key function."""
    attrs_q = tuple((f"{d}/{i}", d, i) for d, i in attr_keys)
    caps_q = tuple((f"{d}/{i}", d, i) for d, i in cap_keys)

    def key(driver: str, multi: bool, attrs: dict, caps: dict) -> tuple:
        parts: list = [driver if need_driver else None, multi if need_multi else None]
        if attrs_q:
            for full, d, i in attrs_q:
                a = attrs.get(full)
                if a is None and d == driver:
                    a = attrs.get(i)
                parts.append(_attr_key(a))
        if caps_q:
            for full, d, i in caps_q:
                c = caps.get(full)
                if c is None and d == driver:
                    c = caps.get(i)
                parts.append(_cap_raw(c))
        return tuple(parts)

    return key


def reads(plan, device: dict, lazy_attributes: bool) -> tuple:
    driver = device.get("driver") or ""
    attrs = device.get("attributes") or {}
    caps = device.get("capacity") or {}
    out = []
    if plan.driver:
        out.append((("driver",), driver))
    if plan.multi:
        out.append((("allowMultipleAllocations",), bool(device.get("allowMultipleAllocations") or False)))
    plain = _plain_138 if lazy_attributes else _plain
    for d, i in plan.attr_keys:
        out.append((("attributes", d, i), plain(raw_attr(attrs, driver, d, i))))
    for d in sorted(plan.attr_domains):
        dom = {i2: plain(a) for n, a in attrs.items() for dd, i2 in (split_name(n, driver),) if dd == d}
        out.append((("attributes", d), dom or None))
    if plan.attr_all:
        out.append((("attributes",), {n: plain(a) for n, a in attrs.items()}))
    for d, i in plan.cap_keys:
        c = caps.get(f"{d}/{i}")
        if c is None and d == driver:
            c = caps.get(i)
        out.append((("capacity", d, i), _cap_raw(c)))
    for d in sorted(plan.cap_domains):
        dom = {i2: _cap_raw(c) for n, c in caps.items() for dd, i2 in (split_name(n, driver),) if dd == d}
        out.append((("capacity", d), dom or None))
    if plan.cap_all:
        out.append((("capacity",), {n: _cap_raw(c) for n, c in caps.items()}))
    return tuple(out)
