"""Seeded, reproducible DRA scenario generator for the fidelity tests (issue 4).

A scenario is one node, DeviceClasses, ResourceClaims to allocate, already-allocated claims and
ResourceSlices, all in resource.k8s.io/v1 JSON shape, plus the full effective map of the DRA feature
gates of one Kubernetes minor. `generate(version, seed, index)` always returns the same scenario for
the same arguments (its own `random.Random` seeded with a string). Every scenario lists the features
it exercises under "features" (for the per-feature agreement table).

Objects are shaped for the API of the minor (e.g. shared counters live in the device slice in 1.34
and in a separate slice of the pool from 1.35 on; list-typed attributes only from 1.36 on), so the
oracle's strict decoding accepts them.

What a newer minor adds is drawn from a random stream of its own (optional_node_operations and gen_alpha.alpha_inputs
for 1.37, v138_inputs for 1.38) and only for that minor on, so the scenarios of an older minor stay byte-identical
for the same seed and index.
"""

from __future__ import annotations

import copy
import random
from typing import Any, Callable

try:  # imported as a package module (pytest) or as a plain script directory (make fidelity)
    from . import gates as gatesmod
    from .gen_alpha import alpha_inputs
except ImportError:  # pragma: no cover
    import gates as gatesmod  # type: ignore
    from gen_alpha import alpha_inputs  # type: ignore

NODE = "node-1"
OTHER_NODE = "node-2"
NAMESPACE = "fidelity"
DRIVERS = ("gpu.example.com", "nic.example.com")
OTHER_DOMAIN = "other.example.org"


def _minor(version: str) -> int:
    return int(version.split(".")[1])


# ---------------------------------------------------------------------------------------------
# Attribute and capacity catalog


STRINGS = ("a100", "h100", "t4", "A100", "", "l4-mig", "x" * 20)
VERSIONS = ("1.2.3", "1.10.0", "2.0.0", "2.0.0-rc.1", "1.2.3+build.5", "0.9.1", "1.2.4")
QUANTITIES = ("8Gi", "16Gi", "24Gi", "40Gi", "80G", "1Ti", "512Mi", "24G", "1500m", "0")


class Ctx:
    """State shared by the pieces of one scenario."""

    def __init__(self, rng: random.Random, version: str):
        self.rng = rng
        self.version = version
        self.minor = _minor(version)
        self.features: set[str] = set()
        # "clean" scenarios avoid constructs that make Allocate fail with an error (CEL errors,
        # fields of disabled features), so that the search itself gets compared; the others
        # draw from everything.
        self.clean = False
        self.gates: dict[str, bool] = {}
        self.class_driver: dict[str, str | None] = {}

    def tag(self, *names: str) -> None:
        self.features.update(names)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p


def gen_attributes(c: Ctx, driver: str) -> dict[str, Any]:
    r = c.rng
    attrs: dict[str, Any] = {}

    def name(id_: str, domain: str | None = None) -> str:
        # Unqualified names get the driver as domain; qualified with the driver's domain land on
        # the same key. Never both spellings of one id (upstream picks one at random then).
        if domain and domain != driver:
            return f"{domain}/{id_}"
        if c.chance(0.3):
            c.tag("attr-qualified-name")
            return f"{driver}/{id_}"
        c.tag("attr-unqualified-name")
        return id_

    always = 1.0 if c.clean else 0.0
    if c.chance(0.8 + always):
        attrs[name("model")] = {"string": r.choice(STRINGS)}
    if c.chance(0.7 + always):
        attrs[name("index")] = {"int": r.choice((0, 1, 2, 3, 7, -1, 2**40))}
    if c.chance(0.6 + always):
        attrs[name("healthy")] = {"bool": r.choice((True, True, False))}
    if c.chance(0.6 + always):
        attrs[name("driverVersion")] = {"version": r.choice(VERSIONS)}
    if c.chance(0.4 + always):
        attrs[name("numa")] = {"int": r.choice((0, 1))}
    if c.chance(0.3):
        attrs[name("family", OTHER_DOMAIN)] = {"string": r.choice(("ampere", "hopper"))}
        c.tag("attr-other-domain")
    if not c.clean and c.chance(0.2):
        # Same id, different type on different devices: heterogeneous comparisons.
        attrs[name("flex")] = r.choice(({"int": 1}, {"string": "1"}, {"bool": True}, {"version": "1.0.0"}))
        c.tag("attr-mixed-types")
    if c.minor >= 36 and c.chance(0.12) and (not c.clean or c.gates.get("DRAListTypeAttributes")):
        c.tag("attr-list")
        # Overlapping and disjoint lists, so that matchAttribute/distinctAttribute on "ids" can go
        # either way under the set semantics of DRAListTypeAttributes.
        attrs[name("ids")] = r.choice(
            (
                {"ints": [0, 1, 2]},
                {"ints": [2, 3]},
                {"ints": [4]},
                {"strings": ["a", "b"]},
                {"strings": ["b", "c"]},
                {"bools": [True]},
                {"versions": ["1.0.0", "2.0.0"]},
                {"versions": ["2.0.0"]},
            )
        )
    if not c.clean and c.chance(0.02):
        # Not valid per API validation, but the scheduler must cope: every CEL evaluation on
        # this device fails while building the attribute map.
        attrs[name("badVersion")] = {"version": r.choice(("1.2", "v1.2.3", "01.2.3"))}
        c.tag("attr-invalid-version")
    return attrs


def gen_capacity(c: Ctx, driver: str, multi: bool) -> dict[str, Any]:
    r = c.rng
    cap: dict[str, Any] = {}
    if c.chance(0.85 + (1 if c.clean else 0)):
        entry: dict[str, Any] = {"value": r.choice(("8Gi", "16Gi", "24Gi", "40Gi", "80Gi", "24G"))}
        if multi and c.chance(0.7):
            entry["requestPolicy"] = gen_request_policy(c)
        cap["memory" if c.chance(0.7) else f"{driver}/memory"] = entry
    if c.chance(0.5 + (1 if c.clean else 0)):
        entry = {"value": r.choice(("4", "8", "100", "1500m"))}
        if multi and c.chance(0.4):
            entry["requestPolicy"] = {"default": "1", "validRange": {"min": "1", "step": "1"}}
            if c.minor >= 37 and c.chance(0.5):
                # Fractional bounds: milli arithmetic with DRAFractionalCapacityRange, Value() without.
                entry["requestPolicy"] = {
                    "default": "500m",
                    "validRange": r.choice(
                        ({"min": "500m", "step": "250m"}, {"min": "500m", "step": "500m", "max": "2"})
                    ),
                }
                c.tag("capacity-fractional-range")
            c.tag("capacity-request-policy")
        cap["cores"] = entry
    return cap


def gen_request_policy(c: Ctx) -> dict[str, Any]:
    r = c.rng
    c.tag("capacity-request-policy")
    kind = r.choice(("range", "values", "default"))
    if kind == "range":
        rng_: dict[str, Any] = {"min": r.choice(("1Gi", "2Gi", "4Gi"))}
        if c.chance(0.6):
            rng_["step"] = r.choice(("1Gi", "2Gi"))
        if c.chance(0.5):
            rng_["max"] = r.choice(("8Gi", "16Gi"))
        return {"default": rng_["min"], "validRange": rng_}
    if kind == "values":
        vals = sorted(r.sample(["1Gi", "2Gi", "4Gi", "8Gi"], r.randint(1, 3)), key=lambda q: int(q[:-2]))
        return {"default": vals[0], "validValues": vals}
    return {"default": r.choice(("1Gi", "4Gi"))}


# ---------------------------------------------------------------------------------------------
# CEL expressions: (template, features). {D} is a domain, {q} a quantity, ...


def gen_atom(c: Ctx, drivers: list[str]) -> str:
    r = c.rng
    D = r.choice(drivers + [OTHER_DOMAIN] if c.chance(0.1) and not c.clean else drivers)
    a = f'device.attributes["{D}"]'
    cap = f'device.capacity["{D}"]'
    q = r.choice(QUANTITIES[:-2])
    n = r.choice((0, 1, 2, 3))
    v = r.choice(VERSIONS)
    s = r.choice(("a100", "h100", "t4", ""))
    choices: list[tuple[str, tuple[str, ...]]] = [
        (f'device.driver == "{r.choice(DRIVERS)}"', ("cel-driver",)),
        (f'{a}.model == "{s}"', ("cel-string-attr",)),
        (f"{a}.index {r.choice(('<', '<=', '>', '>=', '==', '!='))} {n}", ("cel-int-attr",)),
        (f"{a}.index > {n}.5", ("cel-int-vs-double",)),
        (f"{a}.index == {n}.0", ("cel-int-vs-double",)),
        (f"{a}.healthy", ("cel-bool-attr",)),
        (f"!{a}.healthy", ("cel-bool-attr",)),
        (f'{a}.driverVersion.isGreaterThan(semver("{v}"))', ("cel-semver",)),
        (f'{a}.driverVersion.isLessThan(semver("{v}"))', ("cel-semver",)),
        (f'{a}.driverVersion.compareTo(semver("{v}")) >= 0', ("cel-semver",)),
        (f'{a}.driverVersion == semver("{v}")', ("cel-semver",)),
        (f"{a}.driverVersion.major() == 1", ("cel-semver",)),
        (f'semver("{r.choice(("v1.2", "1.2.3", "1"))}", true).minor() == 2', ("cel-semver-normalize",)),
        (f'isSemver("{r.choice(("1.2.3", "v1.2.3", "1.2"))}")', ("cel-semver",)),
        (f'{cap}.memory.compareTo(quantity("{q}")) >= 0', ("cel-quantity",)),
        (f'{cap}.memory.isGreaterThan(quantity("{q}"))', ("cel-quantity",)),
        (f'{cap}.memory.isLessThan(quantity("{q}"))', ("cel-quantity",)),
        (f'{cap}.memory.add(quantity("1Gi")).isGreaterThan(quantity("{q}"))', ("cel-quantity-arith",)),
        (f"{cap}.memory.sub({n}).asInteger() > {n}", ("cel-quantity-arith",)),
        (f"{cap}.memory.add({n}).isInteger()", ("cel-quantity-arith",)),
        (f"{cap}.memory.asApproximateFloat() > 2.0e10", ("cel-quantity",)),
        (f"{cap}.cores.asInteger() >= {n}", ("cel-quantity-arith",)),
        (f'{cap}.memory == quantity("{q}")', ("cel-quantity",)),
        (f'quantity("{r.choice(("200K", "1.5Gi", "10"))}").isInteger()', ("cel-quantity",)),
        (f'isQuantity("{r.choice(("1Gi", "1gi", "x"))}")', ("cel-quantity",)),
        (f'{a}.model.startsWith("{s[:1]}")', ("cel-string-ext",)),
        (f'{a}.model.endsWith("100")', ("cel-string-ext",)),
        (f'{a}.model.contains("10")', ("cel-string-ext",)),
        (f'{a}.model.lowerAscii() == "a100"', ("cel-string-ext",)),
        (f'{a}.model.upperAscii().indexOf("1") >= 0', ("cel-string-ext",)),
        (f'{a}.model.replace("a", "b") == "b100"', ("cel-string-ext",)),
        (f'{a}.model.split("1").size() > 1', ("cel-string-ext",)),
        (f'{a}.model.substring(0, 2) == "a1"', ("cel-string-ext",)),
        (f'{a}.model.charAt(0) == "a"', ("cel-string-ext",)),
        (f"{a}.model.trim().size() == 4", ("cel-string-ext",)),
        (f'{a}.model.matches("^[ah][0-9]+$")', ("cel-matches",)),
        (f'{a}.?model.orValue("none") == "none"', ("cel-optional",)),
        (f'{a}[?"index"].orValue(-1) >= 0', ("cel-optional",)),
        (f"{a}.?nosuch.hasValue()", ("cel-optional",)),
        (f"cel.bind(g, {a}, g.index >= {n} && g.healthy)", ("cel-bind",)),
        (f'cel.bind(m, {cap}.memory, m.compareTo(quantity("{q}")) > 0)', ("cel-bind",)),
        (f"has({a}.model)", ("cel-has",)),
        (f'"numa" in {a}', ("cel-has",)),
        (f'"{D}" in device.attributes', ("cel-domain-membership",)),
        ('device.attributes["unknown.example.net"].size() == 0', ("cel-unknown-domain",)),
        ('device.capacity["unknown.example.net"].size() == 0', ("cel-unknown-domain",)),
        (f"{a}.nosuch == 1", ("cel-missing-id", "cel-runtime-error")),
        (f"{a}.model == {n}", ("cel-heterogeneous-eq",)),
        (f"{a}.flex == 1", ("cel-heterogeneous-eq",)),
        (f'{a}.driverVersion == "{v}"', ("cel-heterogeneous-eq", "cel-runtime-error")),
        (f"{a}.model > {n}", ("cel-type-error", "cel-runtime-error")),
        (f"{a}.flex > 0", ("cel-type-error", "cel-runtime-error")),
        (f"{a}.index / {r.choice((0, 1, 2))} >= 1", ("cel-runtime-error",)),
        (f"{a}.index + 9223372036854775807 > 0", ("cel-runtime-error",)),
        (f"device.allowMultipleAllocations == {r.choice(('true', 'false'))}", ("cel-allow-multiple",)),
        (f"[0, 1, 2].exists(x, x == {a}.index)", ("cel-macros",)),
        (f"{a}.index in [1, 3]", ("cel-macros",)),
        ("device.attributes.all(d, device.attributes[d].size() < 6)", ("cel-macros",)),
        (f'device.attributes.exists(d, d == "{D}")', ("cel-macros",)),
        (f"sets.contains([0, 1, 2], [{a}.index])", ("cel-sets",)),
        (f'ip("10.0.0.{n}").family() == 4', ("cel-k8s-libs",)),
        (f'url("https://{s or "x"}.example.com/p").getHost() == "{s}.example.com"', ("cel-k8s-libs",)),
        (f'{a}.model.find("[0-9]+") == "100"', ("cel-k8s-libs",)),
        (f"[{a}.index, 5].max() > 4", ("cel-k8s-libs",)),
        (f'"{s},x".split(",").size() == 2', ("cel-string-ext",)),
        (f'{a}.index.string() == "{n}"', ("cel-conversions",)),
        (f"int({a}.model) > 0", ("cel-conversions", "cel-runtime-error")),
        (f"double({a}.index) / 2.0 > 0.4", ("cel-conversions",)),
    ]
    if c.clean:
        unsafe = ("cel-runtime-error", "cel-type-error", "cel-compile-error", "cel-cost-limit")
        choices = [
            (e, f)
            for e, f in choices
            if not any(u in f for u in unsafe)
            and ".flex" not in e
            and ".substring(" not in e
            and ".cores.asInteger()" not in e
            and "/ 0 " not in e
            and 'quantity("200K")' not in e
        ]
    if c.chance(0.03) and not c.clean:
        choices.append(("lists.range(2000).all(i, lists.range(2000).all(j, i + j >= 0))", ("cel-cost-limit",)))
    if c.minor >= 36 and (not c.clean or c.gates.get("DRAListTypeAttributes")):
        choices.append((f"{a}.ids.includes({n})", ("cel-list-includes",)))
    if c.chance(0.15) and not c.clean:
        # Compile errors: reachable by the allocator only through a stored expression.
        choices += [
            ('device.name == "gpu-0"', ("cel-compile-error",)),
            (f'{cap}.memory > quantity("{q}")', ("cel-compile-error",)),
            (f"{cap}.memory.sign() == 1", ("cel-compile-error",)),
            ("device.driver", ("cel-compile-error",)),
            ("device.driver ==", ("cel-compile-error",)),
            (f'{a}.model.reverse() == "001a"', ("cel-compile-error",)),
        ]
    expr, feats = r.choice(choices)
    c.tag(*feats)
    return expr


def gen_expression(c: Ctx, drivers: list[str]) -> str:
    r = c.rng
    e = gen_atom(c, drivers)
    if c.chance(0.35):
        op = r.choice(("&&", "||"))
        e2 = gen_atom(c, drivers)
        e = f"{e} {op} {e2}" if c.chance(0.5) else f"({e}) {op} ({e2})"
        c.tag("cel-logic")
    if c.chance(0.05):
        e = f"!({e})"
    if c.chance(0.1):
        e = e.replace(" == ", "\n  == ", 1)  # multi-line expressions, as YAML block scalars give
    return e


def selectors(exprs: list[str]) -> list[dict[str, Any]]:
    return [{"cel": {"expression": e}} for e in exprs]


# ---------------------------------------------------------------------------------------------
# Slices


def node_obj(c: Ctx) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": NODE, "topology.kubernetes.io/zone": c.rng.choice(("zone-a", "zone-b"))}
    if c.chance(0.5):
        labels["example.com/gpu"] = "true"
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE, "labels": labels}}


def node_selector(c: Ctx, matching: bool) -> dict[str, Any]:
    r = c.rng
    if matching and c.chance(0.5):
        req = {"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE]}
    elif matching:
        req = {"key": "topology.kubernetes.io/zone", "operator": "Exists"}
    else:
        req = r.choice(
            (
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [OTHER_NODE]},
                {"key": "example.com/none", "operator": "Exists"},
            )
        )
    return {"nodeSelectorTerms": [{"matchExpressions": [req]}]}


def node_field_selectors(rng: random.Random, slices: list[dict[str, Any]], c: Ctx) -> None:
    """Node selectors by field (matchFields on metadata.name, the only field Kubernetes supports), on slices and on
    devices with per-device node selection: a term replaced or an ORed term added. A stream of its own, so the
    scenarios drawn before it stay as they were."""
    for s in slices:
        spec = s["spec"]
        selectors = [spec["nodeSelector"]] if spec.get("nodeSelector") else []
        selectors += [d["nodeSelector"] for d in spec.get("devices") or [] if d.get("nodeSelector")]
        for sel in selectors:
            if rng.random() >= 0.3:
                continue
            term = {
                "matchFields": [
                    {
                        "key": "metadata.name",
                        "operator": rng.choice(("In", "In", "NotIn")),
                        "values": [rng.choice((NODE, OTHER_NODE))],
                    }
                ]
            }
            if rng.random() < 0.5:
                sel["nodeSelectorTerms"] = [term]
            else:
                sel["nodeSelectorTerms"].append(term)
            c.tag("node-selector-matchFields")


def gen_slices(c: Ctx, drivers: list[str], multi_ok: bool) -> list[dict[str, Any]]:
    r = c.rng
    out: list[dict[str, Any]] = []
    npools = r.choice((1, 1, 2, 2, 3)) if c.minor < 36 else r.choice((1, 2, 2, 3, 4))
    if npools > 1:
        c.tag("several-pools")
    used_pools: set[tuple[str, str]] = set()
    for p in range(npools):
        driver = r.choice(drivers)
        pool = r.choice((NODE, f"{NODE}-{p}", "shared", f"pool-{chr(97 + p)}"))
        if (driver, pool) in used_pools:
            pool = f"{pool}-x{p}"
        used_pools.add((driver, pool))
        out += gen_pool(c, driver, pool, multi_ok)
    if c.chance(0.3):
        r.shuffle(out)
    return out


def gen_pool(c: Ctx, driver: str, pool: str, multi_ok: bool) -> list[dict[str, Any]]:
    r = c.rng
    nslices = r.choice((1, 1, 1, 2, 3))
    if nslices > 1:
        c.tag("several-slices")
    # Pool-wide node targeting.
    mode = r.choices(
        ("nodeName", "nodeName-other", "nodeSelector", "nodeSelector-miss", "allNodes", "perDevice"),
        weights=(40, 6, 14, 5, 15, 10),
    )[0]
    c.tag(f"slice-{mode}")
    counters = c.chance(0.22)
    slices: list[dict[str, Any]] = []
    counter_sets: list[dict[str, Any]] = []
    if counters:
        c.tag("partitionable")
        for i in range(r.choice((1, 1, 2))):
            counter_sets.append(
                {
                    "name": f"cs-{i}",
                    "counters": {
                        "memory": {"value": r.choice(("24Gi", "40Gi", "80Gi"))},
                        **({"slots": {"value": r.choice(("2", "3", "7"))}} if c.chance(0.5) else {}),
                    },
                }
            )
    devcount = 0
    for s in range(nslices):
        spec: dict[str, Any] = {
            "driver": driver,
            "pool": {"name": pool, "generation": 1, "resourceSliceCount": nslices},
        }
        set_targeting(c, spec, mode)
        devices = []
        for _ in range(r.choice((2, 3, 4, 4, 6) if c.clean else (1, 2, 2, 3, 4))):
            devices.append(gen_device(c, driver, f"dev-{devcount}", mode, counter_sets, multi_ok))
            devcount += 1
        spec["devices"] = devices
        if counters and c.minor == 34 and s == 0:
            spec["sharedCounters"] = counter_sets
        slices.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{driver.split('.')[0]}-{pool}-{s}"},
                "spec": spec,
            }
        )
    if counters and c.minor == 34:
        # 1.34: counters are per slice; devices of other slices must not consume the first slice's sets.
        for sl in slices[1:]:
            for d in sl["spec"]["devices"]:
                d.pop("consumesCounters", None)
    if counters and c.minor >= 35:
        # 1.35+: counter sets live in their own slice of the pool, which counts toward resourceSliceCount.
        spec = {
            "driver": driver,
            "pool": {"name": pool, "generation": 1, "resourceSliceCount": nslices + 1},
            "sharedCounters": counter_sets,
        }
        set_targeting(c, spec, mode if mode != "perDevice" else "allNodes")
        if c.chance(0.5):
            spec.pop("nodeName", None), spec.pop("nodeSelector", None), spec.pop("perDeviceNodeSelection", None)
            spec["allNodes"] = True
        for sl in slices:
            sl["spec"]["pool"]["resourceSliceCount"] = nslices + 1
        slices.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{driver.split('.')[0]}-{pool}-counters"},
                "spec": spec,
            }
        )
    # Broken pools.
    if c.chance(0.07):
        c.tag("pool-incomplete")
        for sl in slices:
            sl["spec"]["pool"]["resourceSliceCount"] += 1
    if c.chance(0.05) and slices[0]["spec"].get("devices"):
        c.tag("pool-invalid")
        # A device name used twice within the pool (same or another slice of it).
        dup = copy.deepcopy(slices[0]["spec"]["devices"][0])
        target = [sl for sl in slices if sl["spec"].get("devices")]
        c.rng.choice(target)["spec"]["devices"].append(dup)
    if c.chance(0.05):
        c.tag("pool-generations")
        old = copy.deepcopy(slices[0])
        old["metadata"]["name"] += "-old"
        old["spec"]["pool"]["generation"] = 0
        slices.append(old)
    return slices


def set_targeting(c: Ctx, spec: dict[str, Any], mode: str) -> None:
    if mode == "nodeName":
        spec["nodeName"] = NODE
    elif mode == "nodeName-other":
        spec["nodeName"] = OTHER_NODE
    elif mode == "nodeSelector":
        spec["nodeSelector"] = node_selector(c, True)
    elif mode == "nodeSelector-miss":
        spec["nodeSelector"] = node_selector(c, False)
    elif mode == "allNodes":
        spec["allNodes"] = True
    else:
        spec["perDeviceNodeSelection"] = True


def gen_device(c: Ctx, driver: str, name: str, mode: str, counter_sets: list, multi_ok: bool) -> dict[str, Any]:
    r = c.rng
    d: dict[str, Any] = {"name": name}
    multi = multi_ok and c.chance(0.18)
    if multi:
        d["allowMultipleAllocations"] = True
        c.tag("consumable-capacity")
    attrs = gen_attributes(c, driver)
    if attrs:
        d["attributes"] = attrs
    cap = gen_capacity(c, driver, multi)
    if cap:
        d["capacity"] = cap
    if mode == "perDevice":
        kind = r.choice(("nodeName", "nodeName", "allNodes", "nodeSelector", "other"))
        if kind == "nodeName":
            d["nodeName"] = NODE
        elif kind == "allNodes":
            d["allNodes"] = True
        elif kind == "nodeSelector":
            d["nodeSelector"] = node_selector(c, c.chance(0.7))
        else:
            d["nodeName"] = OTHER_NODE
    if counter_sets and c.chance(0.85):
        cs = r.choice(counter_sets)
        cons = {"memory": {"value": r.choice(("8Gi", "16Gi", "20Gi", "40Gi"))}}
        if "slots" in cs["counters"] and c.chance(0.7):
            cons["slots"] = {"value": "1"}
        d["consumesCounters"] = [{"counterSet": cs["name"], "counters": cons}]
    if c.chance(0.15):
        c.tag("taints")
        effects = ["NoSchedule", "NoExecute"] + (["None"] if c.minor >= 35 else [])
        d["taints"] = [
            {
                "key": r.choice(("example.com/unhealthy", "example.com/maintenance")),
                **({"value": r.choice(("true", "soon"))} if c.chance(0.7) else {}),
                "effect": r.choice(effects),
            }
            for _ in range(r.choice((1, 1, 2)))
        ]
        for t in d["taints"]:
            c.tag(f"taint-{t['effect']}")
    if c.chance(0.08):
        c.tag("binding-conditions")
        d["bindingConditions"] = ["example.com/attached"]
        d["bindingFailureConditions"] = ["example.com/failed"]
        if c.chance(0.5):
            d["bindsToNode"] = True
    return d


# ---------------------------------------------------------------------------------------------
# Classes and claims


def gen_classes(c: Ctx, drivers: list[str]) -> list[dict[str, Any]]:
    r = c.rng
    classes = []
    for i in range(r.choice((1, 1, 2, 3))):
        exprs = []
        drv = r.choice(drivers)
        pinned = c.clean or c.chance(0.85)
        if pinned:
            exprs.append(f'device.driver == "{drv}"')
        for _ in range(r.choice((0, 0, 0, 1) if c.clean else (0, 0, 1, 1, 2))):
            # Clean scenarios only look at the attributes of the class's own driver.
            exprs.append(gen_expression(c, [drv] if c.clean else drivers))
        if len(exprs) > 1:
            c.tag("class-several-selectors")
        spec: dict[str, Any] = {}
        if exprs:
            spec["selectors"] = selectors(exprs)
        classes.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": f"class-{i}"},
                "spec": spec,
            }
        )
        c.class_driver[f"class-{i}"] = drv if pinned else None
    return classes


def gen_tolerations(c: Ctx) -> list[dict[str, Any]]:
    r = c.rng
    c.tag("tolerations")
    out = []
    for _ in range(r.choice((1, 1, 2))):
        t: dict[str, Any] = {}
        op = r.choice(("Exists", "Equal"))  # operator is defaulted to Equal by the apiserver
        if op == "Exists":
            t["operator"] = "Exists"
            if c.chance(0.6):
                t["key"] = r.choice(("example.com/unhealthy", "example.com/maintenance"))
        else:
            t["operator"] = op
            t["key"] = r.choice(("example.com/unhealthy", "example.com/maintenance"))
            t["value"] = r.choice(("true", "soon"))
        if c.chance(0.6):
            t["effect"] = r.choice(("NoSchedule", "NoExecute") + (("None",) if c.minor >= 35 else ()))
        out.append(t)
    return out


def gen_request_body(c: Ctx, classes: list, drivers: list[str], sub: bool) -> dict[str, Any]:
    r = c.rng
    body: dict[str, Any] = {"deviceClassName": r.choice(classes)["metadata"]["name"]}
    if c.clean and c.class_driver.get(body["deviceClassName"]):
        drivers = [c.class_driver[body["deviceClassName"]]]
    # Objects as the apiserver stores them: allocationMode and count are defaulted.
    if c.chance(0.08):
        body["allocationMode"] = "All"
        c.tag("mode-all")
    else:
        count = r.choice((1, 1, 1, 1, 2, 2, 3))
        body["allocationMode"] = "ExactCount"
        body["count"] = count
        c.tag("count-1" if count == 1 else "count-n")
    nsel = r.choice((0, 0, 0, 1) if c.clean else (0, 1, 1, 1, 2))
    if nsel:
        body["selectors"] = selectors([gen_expression(c, drivers) for _ in range(nsel)])
    if c.chance(0.15):
        body["tolerations"] = gen_tolerations(c)
    if c.chance(0.12) and (not c.clean or c.gates.get("DRAConsumableCapacity")):
        c.tag("capacity-requests")
        reqs = {"memory": r.choice(("1Gi", "3Gi", "4Gi", "10Gi", "40Gi"))}
        if c.chance(0.3):
            reqs = {"cores": r.choice(("1", "2", "500m") + (("700m", "1200m", "1000001u") if c.minor >= 37 else ()))}
        body["capacity"] = {"requests": reqs}
    return body


def gen_claim(c: Ctx, name: str, classes: list, drivers: list[str]) -> dict[str, Any]:
    r = c.rng
    requests = []
    for i in range(r.choice((1, 1, 1, 2, 2, 3))):
        req: dict[str, Any] = {"name": f"req-{i}"}
        if c.chance(0.2) and (not c.clean or c.gates.get("DRAPrioritizedList")):
            c.tag("first-available")
            subs = []
            for j in range(r.choice((2, 2, 3))):
                b = gen_request_body(c, classes, drivers, True)
                subs.append({"name": f"sub-{j}", **b})
            req["firstAvailable"] = subs
        else:
            b = gen_request_body(c, classes, drivers, False)
            if c.chance(0.08) and (not c.clean or c.gates.get("DRAAdminAccess")):
                b["adminAccess"] = True
                c.tag("admin-access")
            req["exactly"] = b
        requests.append(req)
    devices: dict[str, Any] = {"requests": requests}
    constraints = []
    if c.chance(0.25):
        names = ("model", "numa", "driverVersion", "healthy", "family") + (("ids",) if c.minor >= 36 else ())
        attr = r.choice(names)
        if attr == "ids":
            c.tag("constraint-list-attr")
        domain = OTHER_DOMAIN if attr == "family" else r.choice(drivers)
        con: dict[str, Any] = {}
        if c.chance(0.5) and len(requests) > 1:
            con["requests"] = r.sample([q["name"] for q in requests], r.randint(1, len(requests)))
        if c.chance(0.7) or (c.clean and not c.gates.get("DRAConsumableCapacity")):
            con["matchAttribute"] = f"{domain}/{attr}"
            c.tag("match-attribute")
        else:
            con["distinctAttribute"] = f"{domain}/{attr}"
            c.tag("distinct-attribute")
        constraints.append(con)
    if constraints:
        devices["constraints"] = constraints
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": f"uid-{name}"},
        "spec": {"devices": devices},
    }


def gen_allocated(c: Ctx, slices: list) -> list[dict[str, Any]]:
    """Claims that already hold some of the devices (possibly admin access or a shared allocation)."""
    r = c.rng
    devices = [
        (s["spec"]["driver"], s["spec"]["pool"]["name"], d) for s in slices for d in s["spec"].get("devices", [])
    ]
    if not devices or not c.chance(0.45):
        return []
    c.tag("devices-in-use")
    out = []
    for i in range(r.choice((1, 1, 2))):
        results = []
        for k, (drv, pool, d) in enumerate(r.sample(devices, min(len(devices), r.choice((1, 1, 2))))):
            res: dict[str, Any] = {"request": f"req-{k}", "driver": drv, "pool": pool, "device": d["name"]}
            if c.chance(0.15):
                res["adminAccess"] = True
                c.tag("in-use-admin-access")
            elif d.get("allowMultipleAllocations") and c.chance(0.8):
                res["shareID"] = f"00000000-0000-0000-0000-00000000{i:02d}{k:02d}"
                res["consumedCapacity"] = {
                    name: (cap.get("requestPolicy", {}).get("default") or cap["value"])
                    for name, cap in d.get("capacity", {}).items()
                }
                c.tag("in-use-shared")
            results.append(res)
        out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"in-use-{i}", "namespace": NAMESPACE, "uid": f"uid-in-use-{i}"},
                "spec": {
                    "devices": {
                        "requests": [
                            {"name": f"req-{k}", "exactly": {"deviceClassName": "class-0"}} for k in range(len(results))
                        ]
                    }
                },
                "status": {"allocation": {"devices": {"results": results}}},
            }
        )
    return out


def optional_node_operations(rng: random.Random, version: str, node: dict, slices: list, c: Ctx) -> None:
    """1.37: slices that skip node operations and nodes that declare (or not) DRAOptionalNodeOperations. Drawn from a
    separate generator so that the scenarios of a seed stay what they were before this field existed."""
    if _minor(version) < 37 or rng.random() >= 0.15:
        return
    c.tag("skip-node-operations")
    for s in slices:
        if s["spec"].get("devices") and rng.random() < 0.5:
            s["spec"]["skipNodeOperations"] = rng.choice(
                (["*"], ["NodePrepareResources", "NodeUnprepareResources"], ["NodeUnprepareResources"])
            )
    if rng.random() < 0.6:
        node["status"] = {
            "declaredFeatures": rng.choice(
                (["DRAOptionalNodeOperations"], ["SomethingElse", "DRAOptionalNodeOperations"], ["SomethingElse"])
            )
        }
    if rng.random() < 0.5:
        c.gates["DRAOptionalNodeOperations"] = True


# 1.38 attribute values the conversion to draapi cannot keep (nil: "unsupported attribute value" in a constraint,
# "value is invalid or its type is not supported by this version" in CEL): semvers that do not parse, a number past
# uint64, empty lists.
INVALID_138 = (
    ("driverVersion", {"version": "01.2.3"}),
    ("driverVersion", {"version": "18446744073709551616.0.0"}),
    ("ids", {"ints": []}),
    ("ids", {"strings": []}),
    ("ids", {"versions": []}),
    ("ids", {"versions": ["1.0.0", "1.02.0"]}),
)
# Versions that differ only in build metadata (1.38 compares semver.Version.Equals, which ignores it; 1.37 the text).
BUILD_VERSIONS = ("1.2.3+a", "1.2.3+b", "1.2.3", "1.2.4+a")


def _bodies(claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for claim in claims:
        for r in claim["spec"]["devices"]["requests"]:
            out += [r["exactly"]] if "exactly" in r else r["firstAvailable"]
    return out


def _attr_key(attrs: dict[str, Any], driver: str, id_: str) -> str:
    """The key under which a device has the attribute id_ of its driver (either spelling), or the plain id."""
    return f"{driver}/{id_}" if f"{driver}/{id_}" in attrs else id_


def v138_inputs(rng: random.Random, claims: list, allocated: list, slices: list, c: Ctx) -> None:
    """1.38 (k8s.io/dynamic-resource-allocation v0.38): inputs whose outcome the 1.38 changes decide. Drawn from a
    stream of its own, and only for 1.38 on, so that the scenarios of older minors stay what they were.

    - capacity requests that name the capacity with the driver's domain (1.38 resolves "x" and "<driver>/x" to one
      capacity on both sides) and, rarely, both spellings of one capacity in one request (a fatal error);
    - matchAttribute / distinctAttribute on versions that differ only in build metadata;
    - rarely, attribute values the conversion turns into nil (invalid semver, empty lists) and a device with both
      spellings of one attribute (the qualified one wins);
    - allocationMode All while a pool is incomplete (now a per-node failure, ErrFailedAllocationOnNode);
    - a share in the allocated state on a device that does not (or no longer does) allow multiple allocations
      (no exclusive allocation while a share is active)."""
    drivers = sorted({s["spec"]["driver"] for s in slices}) or list(DRIVERS[:1])
    bodies = _bodies(claims)

    def driver_of(body: dict[str, Any]) -> str:
        return c.class_driver.get(body["deviceClassName"]) or rng.choice(drivers)

    for body in bodies:
        reqs = (body.get("capacity") or {}).get("requests")
        if not reqs:
            continue
        drv = driver_of(body)
        name = next(iter(reqs))
        if rng.random() < 0.4:
            reqs[f"{drv}/{name}"] = reqs.pop(name)
            name = f"{drv}/{name}"
            c.tag("capacity-request-qualified")
        if rng.random() < (0.04 if c.clean else 0.1):
            other = name.split("/", 1)[1] if "/" in name else f"{drv}/{name}"
            reqs[other] = reqs[name]
            c.tag("capacity-request-both-spellings")

    devices = [
        (s["spec"]["driver"], s["spec"]["pool"]["name"], d) for s in slices for d in s["spec"].get("devices") or []
    ]
    if claims and rng.random() < 0.12:
        drv = rng.choice(drivers)
        for sdrv, _pool, d in devices:
            if sdrv == drv and rng.random() < 0.8:
                attrs = d.setdefault("attributes", {})
                attrs[_attr_key(attrs, drv, "driverVersion")] = {"version": rng.choice(BUILD_VERSIONS)}
        kind = "matchAttribute" if rng.random() < 0.6 else "distinctAttribute"
        rng.choice(claims)["spec"]["devices"].setdefault("constraints", []).append({kind: f"{drv}/driverVersion"})
        c.tag("version-build-metadata", "match-attribute" if kind == "matchAttribute" else "distinct-attribute")
    if devices and rng.random() < (0.03 if c.clean else 0.1):
        drv, _pool, d = rng.choice(devices)
        id_, value = rng.choice(INVALID_138)
        attrs = d.setdefault("attributes", {})
        attrs[_attr_key(attrs, drv, id_)] = value
        c.tag("attr-invalid-1.38")
        if claims and rng.random() < 0.5:
            # A constraint on it: the allocation aborts once the device is tried ("unsupported attribute value").
            kind = "matchAttribute" if rng.random() < 0.5 else "distinctAttribute"
            rng.choice(claims)["spec"]["devices"].setdefault("constraints", []).append({kind: f"{drv}/{id_}"})
            c.tag("constraint-invalid-attr")
    if devices and not c.clean and rng.random() < 0.05:
        drv, _pool, d = rng.choice(devices)
        attrs = d.setdefault("attributes", {})
        attrs["model"], attrs[f"{drv}/model"] = {"string": "a100"}, {"string": "h100"}
        c.tag("attr-both-spellings")

    pools = sorted({(s["spec"]["driver"], s["spec"]["pool"]["name"]) for s in slices})
    if bodies and pools and rng.random() < 0.05:
        body = rng.choice(bodies)
        body["allocationMode"] = "All"
        body.pop("count", None)
        drv, pool = rng.choice(pools)
        for s in slices:
            if (s["spec"]["driver"], s["spec"]["pool"]["name"]) == (drv, pool):
                s["spec"]["pool"]["resourceSliceCount"] += 1
        c.tag("mode-all", "mode-all-incomplete-pool", "pool-incomplete")

    exclusive = [x for x in devices if not x[2].get("allowMultipleAllocations")]
    if exclusive and rng.random() < 0.12:
        drv, pool, d = rng.choice(exclusive)
        if rng.random() < 0.5:
            d["allowMultipleAllocations"] = False  # updated from true to false while the share lives on
        res: dict[str, Any] = {
            "request": "req-0",
            "driver": drv,
            "pool": pool,
            "device": d["name"],
            "shareID": f"00000000-0000-0000-0000-0000000138{len(allocated):02d}",
        }
        if d.get("capacity"):
            res["consumedCapacity"] = {name: cap["value"] for name, cap in d["capacity"].items()}
        name = f"in-use-share-{len(allocated)}"
        allocated.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": NAMESPACE, "uid": f"uid-{name}"},
                "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "class-0"}}]}},
                "status": {"allocation": {"devices": {"results": [res]}}},
            }
        )
        c.tag("devices-in-use", "in-use-shared", "share-on-exclusive-device")


def gen_gates(c: Ctx) -> dict[str, bool]:
    g = gatesmod.defaults(c.version)
    if c.chance(0.45):
        c.tag("gates-non-default")
        for name in gatesmod.flippable(c.version):
            if c.chance(0.35):
                g[name] = not g[name]
    return g


def generate(version: str, seed: int | str, index: int) -> dict[str, Any]:
    """The scenario number `index` of the run seeded with `seed` for one Kubernetes minor."""
    rng = random.Random(f"kubectl-dra-fidelity:{seed}:{version}:{index}")
    c = Ctx(rng, version)
    drivers = list(DRIVERS[: rng.choice((1, 1, 2))])
    gates = gen_gates(c)
    c.gates = gates
    c.clean = rng.random() < 0.7
    if c.clean:
        c.tag("clean")
    multi_ok = True
    slices = gen_slices(c, drivers, multi_ok)
    classes = gen_classes(c, drivers)
    claims = [gen_claim(c, f"claim-{i}", classes, drivers) for i in range(rng.choice((1, 1, 1, 2, 2, 3)))]
    if len(claims) > 1:
        c.tag("several-claims")
    allocated = gen_allocated(c, slices)
    for g, on in gates.items():
        if (
            on
            and g in gatesmod.ALLOCATOR_GATES
            and gatesmod.GATES[version][g][1] != gatesmod.GA
            and not gatesmod.GATES[version][g][0]
        ):
            c.tag(f"gate-{g}")
    node = node_obj(c)
    optional_node_operations(
        random.Random(f"kubectl-dra-fidelity:{seed}:{version}:{index}:nodeops"), version, node, slices, c
    )
    node_field_selectors(random.Random(f"kubectl-dra-fidelity:{seed}:{version}:{index}:fields"), slices, c)
    alpha_inputs(random.Random(f"kubectl-dra-fidelity:{seed}:{version}:{index}:alpha"), claims, slices, drivers, c)
    if c.minor >= 38:
        v138_inputs(random.Random(f"kubectl-dra-fidelity:{seed}:{version}:{index}:v138"), claims, allocated, slices, c)
    return {
        "id": f"{version}/{seed}/{index}",
        "version": version,
        "featureGates": gates,
        "node": node,
        "deviceClasses": classes,
        "claims": claims,
        "allocatedClaims": allocated,
        "slices": slices,
        "features": sorted(c.features),
    }


def scenarios(version: str, seed: int | str, n: int, start: int = 0, trace: bool = True):
    """The scenarios, each asking the oracle for upstream's per-device trace (reasons.py compares it)."""
    for i in range(start, start + n):
        s = generate(version, seed, i)
        if trace:
            s["trace"] = True
        yield s


# ---------------------------------------------------------------------------------------------
# Shrinking


def _candidates(s: dict[str, Any]):
    """Yield (description, smaller scenario) for every single-step reduction of s."""

    def variant(fn: Callable[[dict[str, Any]], bool], what: str):
        t = copy.deepcopy(s)
        if fn(t) is not False:
            return what, t
        return None

    out = []
    for i in range(len(s["claims"])):
        out.append(variant(lambda t, i=i: t["claims"].pop(i), f"claim {i}"))
    for i in range(len(s["allocatedClaims"])):
        out.append(variant(lambda t, i=i: t["allocatedClaims"].pop(i), f"allocated claim {i}"))
    for i in range(len(s["slices"])):

        def drop_slice(t, i=i):
            sl = t["slices"].pop(i)
            for o in t["slices"]:
                if (
                    o["spec"]["driver"] == sl["spec"]["driver"]
                    and o["spec"]["pool"]["name"] == sl["spec"]["pool"]["name"]
                ):
                    o["spec"]["pool"]["resourceSliceCount"] = max(1, o["spec"]["pool"]["resourceSliceCount"] - 1)

        out.append(variant(drop_slice, f"slice {i} (count adjusted)"))
        out.append(variant(lambda t, i=i: t["slices"].pop(i), f"slice {i}"))
    for i, sl in enumerate(s["slices"]):
        for j in range(len(sl["spec"].get("devices", []))):
            out.append(variant(lambda t, i=i, j=j: t["slices"][i]["spec"]["devices"].pop(j), f"device {i}/{j}"))
        for j, d in enumerate(sl["spec"].get("devices", [])):
            for key in ("attributes", "capacity"):
                for name in list(d.get(key, {})):
                    out.append(
                        variant(
                            lambda t, i=i, j=j, key=key, name=name: t["slices"][i]["spec"]["devices"][j][key].pop(name),
                            f"{key} {name}",
                        )
                    )
            for key in (
                "taints",
                "consumesCounters",
                "bindingConditions",
                "bindingFailureConditions",
                "bindsToNode",
                "allowMultipleAllocations",
                "nodeSelector",
            ):
                if key in d:
                    out.append(variant(lambda t, i=i, j=j, key=key: t["slices"][i]["spec"]["devices"][j].pop(key), key))
            for m, cc in enumerate(d.get("consumesCounters") or []):
                if "compatibilityGroups" in cc:
                    out.append(
                        variant(
                            lambda t, i=i, j=j, m=m: t["slices"][i]["spec"]["devices"][j]["consumesCounters"][m].pop(
                                "compatibilityGroups"
                            ),
                            "compatibilityGroups",
                        )
                    )
        for key in ("sharedCounters",):
            if key in sl["spec"]:
                out.append(variant(lambda t, i=i, key=key: t["slices"][i]["spec"].pop(key), key))
    for i, cl in enumerate(s["deviceClasses"]):
        for j in range(len(cl["spec"].get("selectors", []))):
            out.append(
                variant(
                    lambda t, i=i, j=j: t["deviceClasses"][i]["spec"]["selectors"].pop(j), f"class selector {i}/{j}"
                )
            )
    for i, cl in enumerate(s["claims"]):
        dv = cl["spec"]["devices"]
        if len(dv["requests"]) > 1:
            for j in range(len(dv["requests"])):
                out.append(
                    variant(
                        lambda t, i=i, j=j: t["claims"][i]["spec"]["devices"]["requests"].pop(j), f"request {i}/{j}"
                    )
                )
        for j in range(len(dv.get("constraints", []))):
            out.append(
                variant(lambda t, i=i, j=j: t["claims"][i]["spec"]["devices"]["constraints"].pop(j), "constraint")
            )
        for j, rq in enumerate(dv["requests"]):
            bodies = (
                [("exactly", None)]
                if "exactly" in rq
                else [("firstAvailable", k) for k in range(len(rq["firstAvailable"]))]
            )
            if "firstAvailable" in rq and len(rq["firstAvailable"]) > 1:
                for k in range(len(rq["firstAvailable"])):
                    out.append(
                        variant(
                            lambda t, i=i, j=j, k=k: t["claims"][i]["spec"]["devices"]["requests"][j][
                                "firstAvailable"
                            ].pop(k),
                            "subrequest",
                        )
                    )
            for field, k in bodies:
                body = rq[field] if k is None else rq[field][k]

                def get(t, i=i, j=j, field=field, k=k):
                    b = t["claims"][i]["spec"]["devices"]["requests"][j][field]
                    return b if k is None else b[k]

                for m in range(len(body.get("selectors", []))):
                    out.append(variant(lambda t, get=get, m=m: get(t)["selectors"].pop(m), "request selector"))
                for key in ("tolerations", "capacity", "adminAccess", "derivedAttributes"):
                    if key in body:
                        out.append(variant(lambda t, get=get, key=key: get(t).pop(key), key))
                if body.get("count", 1) > 1:  # count stays defaulted (>= 1), as the apiserver stores it
                    out.append(variant(lambda t, get=get: get(t).update(count=1), "count=1"))
                if body.get("allocationMode") == "All":
                    out.append(
                        variant(lambda t, get=get: get(t).update(allocationMode="ExactCount", count=1), "ExactCount")
                    )
    return [o for o in out if o]


def _prune_empty(x: Any) -> Any:
    if isinstance(x, dict):
        out = {k: _prune_empty(v) for k, v in x.items()}
        return {
            k: v
            for k, v in out.items()
            if v not in ([], {}) or k in ("allocatedClaims", "claims", "slices", "deviceClasses", "features")
        }
    if isinstance(x, list):
        return [_prune_empty(v) for v in x]
    return x


def _default_gates(s: dict[str, Any]) -> dict[str, Any]:
    s["featureGates"] = gatesmod.defaults(s["version"])
    return s


def shrink(
    scenario: dict[str, Any],
    still_fails: Callable[[dict[str, Any]], bool],
    max_steps: int = 400,
    budget_s: float = 120.0,
) -> dict[str, Any]:
    """Greedy delta debugging: keep applying the first single-step reduction that keeps the
    disagreement, until none does (or max_steps predicate calls, or budget_s seconds)."""
    import time

    deadline = time.monotonic() + budget_s
    cur = copy.deepcopy(scenario)
    steps = 0
    progress = True
    while progress and steps < max_steps and time.monotonic() < deadline:
        progress = False
        for _what, cand in _candidates(cur):
            steps += 1
            if still_fails(cand):
                cur = cand
                progress = True
                break
            if steps >= max_steps or time.monotonic() >= deadline:
                break
    # Final tidy-up: drop containers the removals left empty, and default gates, if that keeps it.
    for tidy in (_prune_empty, _default_gates):
        cand = tidy(copy.deepcopy(cur))
        if cand != cur and still_fails(cand):
            cur = cand
    cur["id"] = scenario["id"] + "/min"
    cur["features"] = []
    return cur
