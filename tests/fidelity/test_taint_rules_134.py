"""DeviceTaintRules on 1.34, where a rule's selector (resource.k8s.io/v1alpha3) may also name a DeviceClass and CEL
selectors: kubectl-dra's apply_taint_rules with taint_rule_select against the real 1.34 ResourceSlice tracker
(tests/oracle/tracker134: k8s.io/dynamic-resource-allocation v0.34.13 resourceslice/tracker over a fake clientset's
informers, as kube-scheduler runs it with DRADeviceTaints on). Per slice, the taints of every device must be the
tracker's; where the tracker fails to patch a slice (a selector that does not compile), it keeps an earlier view of
it or none, depending on the order its informers delivered the objects in, and the engine must report the rule
as a gap (DRA016) instead of an answer."""

from __future__ import annotations

import copy
import json
import random
import subprocess

import pytest
from builders import dclass, device, rslice

from kubectl_dra.analyze.allocator import SelectorEvaluator, apply_taint_rules, taint_rule_select
from kubectl_dra.features import Semantics

from .oracle import oracle_path

pytestmark = pytest.mark.oracle

SEM = Semantics.for_version((1, 34), {"DRADeviceTaints": True})
DRIVERS = ("gpu.example.com", "nic.example.com")
MODELS = ("a100", "h100")
CLASS_SELECTORS = (
    'device.driver == "gpu.example.com"',
    "device.attributes[device.driver].model == 'h100'",  # a runtime error where the attribute is missing
    "device.capacity[device.driver].memory.compareTo(quantity('40Gi')) >= 0",
    "true",
)
RULE_SELECTORS = (
    "device.attributes[device.driver].model == 'a100'",
    "device.attributes[device.driver].model.startsWith('h')",
    "has(device.attributes[device.driver].model)",
    "false",
    "device.attributes[device.driver].model ==",  # does not compile
    "device.nosuchfield == 1",  # does not compile (no such field of device)
)


def _device(rnd: random.Random, name: str) -> dict:
    attrs = {"model": rnd.choice(MODELS)} if rnd.random() < 0.8 else None
    memory = rnd.choice(("16Gi", "40Gi", "80Gi")) if rnd.random() < 0.7 else None
    return device(name, memory=memory, attrs=attrs)


def scenario(seed: int) -> dict:
    rnd = random.Random(f"taint-rules-134-{seed}")
    slices = []
    for i in range(rnd.randint(1, 3)):
        driver = rnd.choice(DRIVERS)
        devices = [_device(rnd, f"dev-{j}") for j in range(rnd.randint(1, 3))]
        slices.append(rslice(f"slice-{i}", devices, f"node-{i}", f"pool-{i % 2}", driver))
    classes = [dclass(f"class-{k}", rnd.sample(CLASS_SELECTORS, rnd.randint(0, 2))) for k in range(2)]
    rules = []
    for r in range(rnd.randint(1, 3)):
        sel: dict | None = {}
        if rnd.random() < 0.1:
            sel = None  # 1.34 taints every device with a rule without a selector
        else:
            if rnd.random() < 0.4:
                sel["driver"] = rnd.choice(DRIVERS)
            if rnd.random() < 0.2:
                sel["pool"] = rnd.choice(("pool-0", "pool-1"))
            if rnd.random() < 0.2:
                sel["device"] = rnd.choice(("dev-0", "dev-1"))
            if rnd.random() < 0.5:
                sel["deviceClassName"] = rnd.choice(("class-0", "class-1", "no-such-class"))
            if rnd.random() < 0.5:
                sel["selectors"] = [{"cel": {"expression": e}} for e in rnd.sample(RULE_SELECTORS, rnd.randint(1, 2))]
        spec: dict = {
            "taint": {"key": f"example.com/t{r}", "value": str(r), "effect": rnd.choice(("NoSchedule", "NoExecute"))}
        }
        if sel is not None:
            spec["deviceSelector"] = sel
        rules.append(
            {
                "apiVersion": "resource.k8s.io/v1alpha3",
                "kind": "DeviceTaintRule",
                "metadata": {"name": f"rule-{r}"},
                "spec": spec,
            }
        )
    return {"slices": slices, "rules": rules, "classes": classes}


def engine(s: dict) -> dict:
    """Per slice: {device: sorted [(key, value, effect)]} (the tracker applies the rules in its indexer's order,
    which is a Go map's; what taints a device carries is what allocation reads), or None where a rule that reaches
    it cannot be judged."""
    classes = {c["metadata"]["name"]: c for c in s["classes"]}
    ev = SelectorEvaluator(SEM)
    out = {}
    for sl in s["slices"]:
        gaps: dict = {}
        (patched,) = apply_taint_rules(
            [copy.deepcopy(sl)],
            s["rules"],
            SEM.behaviour.nil_taint_selector_matches_all,
            taint_rule_select(ev, classes, gaps),
        )
        out[sl["metadata"]["name"]] = (
            None
            if gaps
            else {
                d["name"]: sorted((t["key"], t.get("value", ""), t["effect"]) for t in d.get("taints") or [])
                for d in patched["spec"]["devices"]
            }
        )
    return out


@pytest.fixture(scope="module")
def tracker():
    path = oracle_path("tracker134")

    def run(scenarios: list[dict]) -> list[dict]:
        payload = "".join(json.dumps(s) + "\n" for s in scenarios)
        proc = subprocess.run([str(path)], input=payload, capture_output=True, text=True, timeout=600, check=True)
        return [json.loads(line) for line in proc.stdout.splitlines()]

    return run


def upstream(answer: dict, s: dict) -> dict:
    """The tracker's answer in engine()'s form: None for a slice it failed to patch at some point of its sync (what
    it lists for one then depends on the order its informers delivered the objects in)."""
    assert "error" not in answer, answer
    got, failed = answer["slices"] or {}, set(answer["failed"])
    out = {}
    for sl in s["slices"]:
        name = sl["metadata"]["name"]
        if name in failed:
            out[name] = None
        else:
            assert name in got, (name, answer)
            out[name] = {
                d: sorted((t["key"], t.get("value", ""), t["effect"]) for t in ts) for d, ts in got[name].items()
            }
    return out


def test_engine_applies_1_34_taint_rules_as_the_tracker_does(tracker):
    scenarios = [scenario(i) for i in range(300)]
    answers = tracker(scenarios)
    assert len(answers) == len(scenarios)
    tainted = gaps = 0
    reasked = []
    for i, (s, a) in enumerate(zip(scenarios, answers)):
        theirs, ours = upstream(a, s), engine(s)
        if ours != theirs:
            # Under load the harness has once listed a slice before the tracker applied a rule whose class had just
            # arrived (scenario 23 in CI, 2026-12-03: no taints; 300 of 300 re-runs of it alone taint both devices).
            # A disagreement is asked again in a run of its own; a settled tracker must then agree, and such re-asks
            # stay rare, so a real difference still fails.
            theirs = upstream(tracker([s])[0], s)
            reasked.append(i)
        assert ours == theirs, f"scenario {i}: {json.dumps(s)}"
        tainted += sum(1 for v in ours.values() if v and any(v.values()))
        gaps += sum(1 for v in ours.values() if v is None)
    # the generated scenarios reach every outcome: slices with taints, without, and unknowable ones
    assert tainted > 50 and gaps > 10, (tainted, gaps)
    assert len(reasked) <= 3, f"the tracker answered differently on a second run for scenarios {reasked}"


def test_a_rule_naming_a_missing_class_applies_nowhere(tracker):
    s = scenario(0)
    s["rules"] = [
        {
            "apiVersion": "resource.k8s.io/v1alpha3",
            "kind": "DeviceTaintRule",
            "metadata": {"name": "r"},
            "spec": {
                "deviceSelector": {"deviceClassName": "no-such-class"},
                "taint": {"key": "k", "effect": "NoSchedule"},
            },
        }
    ]
    (answer,) = tracker([s])
    assert engine(s) == upstream(answer, s)
    assert all(not ts for devices in engine(s).values() for ts in devices.values())
