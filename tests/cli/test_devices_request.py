"""devices --class C --request FILE: how many more of one request fit, per node and in total (issue 28 item 4).
The golden scenario devices-request-counters covers the node-local case with a counter that runs out; these cover
the file's forms and errors, devices several nodes reach (counted once in the total), and the structured output."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from builders import dclass, device, node, rslice
from clirun import run

from kubectl_dra.analyze.reports.replicas import ORDER_DECIDES

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "devices-request-counters"
INPUT = str(SCENARIO / "input.yaml")
REQUEST = SCENARIO / "request.yaml"
DRIVER = "gpu.example.com"


def devices(*args):
    return run(["devices", *args, "--from-file", INPUT, "--kubernetes-version", "1.37"])


def one_line_error(r, fragment: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], r.stderr
    assert r.stdout == ""


def write(tmp_path, doc, name="req.yaml") -> str:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else yaml.safe_dump_all(doc if isinstance(doc, list) else [doc]))
    return str(p)


def template() -> dict:
    return yaml.safe_load(REQUEST.read_text())


def test_json_per_node_total_and_the_counter_that_ran_out():
    r = devices("--class", "gpu", "--request", str(REQUEST), "-o", "json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["kind"] == "RequestFit" and d["request"] == {"claim": "ml-prod/mig-1g", "class": "gpu",
                                                          "classFromFlag": False}  # fmt: skip
    assert {n["node"]: n["fit"] for n in d["nodes"]} == {"node-01": 2, "node-02": 2}
    assert d["total"]["fit"] == 4 and not d["total"]["shared"]
    n1 = next(n for n in d["nodes"] if n["node"] == "node-01")
    assert "counter set gpu-0 counter memory: needs 10Gi, 0 left" in n1["firstLimit"]
    assert d["inFlight"] == ["ml-prod/notebook-0"] and d["nodesWithoutCandidates"] == 1
    y = devices("--class", "gpu", "--request", str(REQUEST), "-o", "yaml")
    assert y.returncode == 0 and yaml.safe_load(y.stdout) == d


def test_a_claim_is_taken_as_the_template_is(tmp_path):
    t = template()
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": t["metadata"],
             "spec": t["spec"]["spec"]}  # fmt: skip
    r = devices("--class", "gpu", "--request", write(tmp_path, claim), "-o", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["total"]["fit"] == 4


def test_class_mismatch_is_one_error_line():
    one_line_error(
        devices("--class", "nic", "--request", str(REQUEST)), 'asks for DeviceClass "gpu", not --class "nic"'
    )


def test_a_request_without_a_class_takes_the_flags(tmp_path):
    t = template()
    del t["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"]
    r = devices("--class", "gpu", "--request", write(tmp_path, t), "-o", "json")
    d = json.loads(r.stdout)
    assert r.returncode == 0 and d["request"]["classFromFlag"] and d["total"]["fit"] == 4
    # the nic class's devices are no GPU: nothing fits, and that is exit 1 (as a claim that cannot be allocated)
    r = devices("--class", "nic", "--request", write(tmp_path, t))
    assert r.returncode == 1 and "Total: 0 more of ml-prod/mig-1g fit (class nic, from --class)." in r.stdout


def test_bad_files_are_one_error_line(tmp_path):
    one_line_error(devices("--class", "gpu", "--request", str(tmp_path / "missing.yaml")), "missing.yaml")
    one_line_error(devices("--class", "gpu", "--request", write(tmp_path, "kind: [\n")), "req.yaml")
    two = [template(), dict(template(), metadata={"name": "other", "namespace": "ml-prod"})]
    one_line_error(devices("--class", "gpu", "--request", write(tmp_path, two)), "expected exactly one")
    empty = template()
    empty["spec"]["spec"]["devices"]["requests"] = []
    one_line_error(devices("--class", "gpu", "--request", write(tmp_path, empty)), "requests no device")
    admin = template()
    admin["spec"]["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    one_line_error(devices("--class", "gpu", "--request", write(tmp_path, admin)), "asks for admin access")


def test_flag_errors():
    one_line_error(devices("--request", str(REQUEST)), "--request needs --class")
    one_line_error(devices("--class", "gpux", "--request", str(REQUEST)), 'DeviceClass "gpux" not found')
    one_line_error(devices("--class", "gpu", "--request", str(REQUEST), "--free"), "cannot be combined with --free")
    one_line_error(devices("--class", "gpu", "--request", str(REQUEST), "-o", "name"), "no -o name")


BUNDLE = {"apiVersion": "kubectl-dra/v1alpha1", "kind": "Bundle", "metadata": {"name": "kubectl-dra-bundle"}}


def _shared_input(tmp_path) -> str:
    """Three nodes that all reach one network-attached pool of three devices, and node-02 one GPU of its own (node-01
    and node-03 see the same pools: one search answers both)."""

    def sl(name, devs, **spec):
        return rslice(name, [device(d) for d in devs], pool=name, driver=DRIVER, **spec)

    nodes = [node(n, allocatable={}) for n in ("node-01", "node-02", "node-03")]
    objs = [
        BUNDLE,  # a dump of a cluster with no ResourceClaim (a plain one without claims leaves the count open)
        *nodes,
        dclass("gpu", f'device.driver == "{DRIVER}"'),
        sl("fabric", ["a", "b", "c"], allNodes=True),
        sl("node-02", ["local"], nodeName="node-02"),
    ]
    return write(tmp_path, {"apiVersion": "v1", "kind": "List", "items": objs}, "cluster.yaml")


def test_devices_several_nodes_reach_count_once(tmp_path):
    t = template()
    del t["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"]
    args = ["devices", "--class", "gpu", "--request", write(tmp_path, t), "--from-file", _shared_input(tmp_path)]
    r = run([*args, "-o", "json", "--kubernetes-version", "1.37"])
    d = json.loads(r.stdout)
    assert r.returncode == 0, r.stderr
    assert {n["node"]: (n["fit"], n["shared"]) for n in d["nodes"]} == {
        "node-01": (3, True),
        "node-02": (4, True),
        "node-03": (3, True),
    }
    assert d["total"]["fit"] == 4 and d["total"]["shared"]  # not 3 + 4: the fabric's devices are taken once
    text = run([*args, "--kubernetes-version", "1.37"]).stdout
    assert "Total: 4 more of ml-prod/mig-1g fit (class gpu)." in text
    assert "Devices several nodes reach count once" in text


def test_an_error_of_the_scheduler_s_attempt_is_undetermined_with_no_total(tmp_path):
    t = template()
    t["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [{"cel": {"expression": "device.x ==== 1"}}]
    r = devices("--class", "gpu", "--request", write(tmp_path, t), "-o", "json")
    assert r.returncode == 2 and r.stderr.startswith("error: the scheduler's attempt for a copy errs"), r.stderr
    assert json.loads(r.stdout)["total"]["fit"] is None
    text = devices("--class", "gpu", "--request", write(tmp_path, t))
    assert text.returncode == 2 and "Total: undetermined for ml-prod/mig-1g (class gpu)." in text.stdout


def test_agrees_with_match_count():
    """The same copies, placed by match claim --count's queue: as many fit, on the same nodes where the queue names
    them. Here it names none: notebook-0, pending ahead of the copies, may go to either node (the scheduler's pick),
    and how many copies each node then holds follows it (node-01 2 and node-02 2, or 3 and 1), so each copy is counted
    under no node's name."""
    d = json.loads(devices("--class", "gpu", "--request", str(REQUEST), "-o", "json").stdout)
    m = run(["match", "claim", "-f", str(REQUEST), "--count", str(d["total"]["fit"] + 1), "--from-file", INPUT,
             "--kubernetes-version", "1.37", "-o", "json"])  # fmt: skip
    count = json.loads(m.stdout)["count"]
    per_node = {n["node"]: n["fit"] for n in d["nodes"]}
    assert count["fit"] == d["total"]["fit"] == sum(count["nodes"].values()), count
    assert all(per_node.get(k) == v for k, v in count["nodes"].items() if k != ORDER_DECIDES), (count, per_node)
    assert count["nodes"] == {ORDER_DECIDES: count["fit"]}, count


def test_a_driver_a_class_names_with_no_slices_is_an_empty_answer_that_says_why():
    """devices --driver D where no ResourceSlice of D exists but a DeviceClass selects D: not a typo (exit 0, no
    devices) and the driver piece's reason on stderr and in -o json; a name nothing knows stays an error."""
    scenarios = SCENARIO.parent
    for name, state, words in (
        ("driver-publishes-nothing", "publishing-nothing", "the plugin runs and publishes nothing"),
        ("driver-not-deployed", "not-found", "it is likely not installed"),
    ):
        inp = str(scenarios / name / "input.yaml")
        r = run(["devices", "--driver", DRIVER, "--from-file", inp])
        assert r.returncode == 0 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
        assert f"{DRIVER} publishes no ResourceSlice: " in r.stderr and words in r.stderr, r.stderr
        assert r.stderr.count("\n") == 2, r.stderr  # not a terminal: one line a note, whatever its length
        j = json.loads(run(["devices", "--driver", DRIVER, "--from-file", inp, "-o", "json"]).stdout)
        assert [(p["driver"], p["state"]) for p in j["publishing"]] == [(DRIVER, state)], j["publishing"]
        one_line_error(run(["devices", "--driver", "gpu.exmple.com", "--from-file", inp]), "did you mean")
    # a driver with devices has no such note
    j = json.loads(devices("--driver", DRIVER, "-o", "json").stdout)
    assert j["publishing"] == [] and j["summary"]["devices"] > 0
