"""The generator's 1.37+ alpha inputs (generator.py calls alpha_inputs): counter compatibility groups
(DRADeviceCompatibilityGroups) and derived attributes (DRADerivedAttributes), each with its gate on or off."""

from __future__ import annotations

import random
from typing import Any

# Compatibility groups a counter consumption names (at most 2, unique; [] is "no groups").
GROUPS = ([], ["mig-a"], ["mig-b"], ["mig-a", "mig-b"], ["mps"])


def _derived_expressions(drv: str) -> tuple[str, ...]:
    """Derived attribute expressions over the generator's attributes (gen_attributes): scalars of each type, a
    guarded and an unguarded read (a missing attribute aborts the allocation), lists, and two that upstream refuses
    (a double: compile error; a mixed list: the value is no attribute)."""
    a = f'device.attributes["{drv}"]'
    return (
        f"{a}.numa",
        f"has({a}.numa) ? {a}.numa / 2 : -1",
        f'has({a}.model) ? {a}.model : ""',
        f"has({a}.healthy) ? {a}.healthy : false",
        f'has({a}.driverVersion) ? {a}.driverVersion : semver("0.0.1")',
        "device.driver",
        f"has({a}.index) ? {a}.index % 2 == 0 : true",
        f'has({a}.model) ? [{a}.model, "any"] : ["any"]',
        f"has({a}.numa) ? [{a}.numa] : [0, 1]",
        f"has({a}.numa) ? [{a}.numa] : []",
        "1.5",
        '[1, "a"]',
    )


def alpha_inputs(rng: random.Random, claims: list, slices: list, drivers: list, c) -> None:
    """1.37+ alpha features, each with its gate on or off: counter compatibility groups (DRADeviceCompatibilityGroups)
    on the consumptions of partitionable devices, and derived attributes (DRADerivedAttributes) on requests with a
    constraint that reads them. Drawn from a stream of their own, so that the scenarios of a seed stay what they
    were before."""
    if c.minor < 37:
        return
    consuming = [cc for s in slices for d in s["spec"].get("devices") or [] for cc in d.get("consumesCounters") or []]
    if consuming and rng.random() < 0.25:
        c.tag("compatibility-groups")
        for cc in consuming:
            if rng.random() < 0.75:
                groups = rng.choice(GROUPS)
                if groups:
                    cc["compatibilityGroups"] = list(groups)
        on = rng.random() < 0.6
        c.gates["DRADeviceCompatibilityGroups"] = on
        c.tag("compatibility-groups-gate-" + ("on" if on else "off"))
    if claims and rng.random() < 0.2:
        c.tag("derived-attributes")
        claim = rng.choice(claims)
        reqs = claim["spec"]["devices"]["requests"]
        drv = rng.choice(drivers)
        name = rng.choice(("derived/key", f"{drv}/numa", f"{drv}/model"))  # a name of its own, or one that shadows
        exprs = _derived_expressions(drv)
        clean = exprs[1:-2] if c.clean else exprs
        for req in reqs:
            for body in [req["exactly"]] if "exactly" in req else req["firstAvailable"]:
                if rng.random() < 0.8:
                    body["derivedAttributes"] = [{"name": name, "expression": rng.choice(clean)}]
        kind = "matchAttribute" if rng.random() < 0.6 else "distinctAttribute"
        con: dict[str, Any] = {kind: name}
        if len(reqs) > 1 and rng.random() < 0.4:
            con["requests"] = rng.sample([q["name"] for q in reqs], rng.randint(1, len(reqs)))
        claim["spec"]["devices"].setdefault("constraints", []).append(con)
        on = rng.random() < 0.7
        c.gates["DRADerivedAttributes"] = on
        c.tag("derived-attributes-gate-" + ("on" if on else "off"))
