"""The user-path matrix, offline: every command x every way of handing it the objects x every namespace form x every
output, asserting the answers agree (issue 27, item 2).

A regression once made -n ignored for plain --from-file input and none of 2,616 tests noticed: no test used a namespace
other than `default`, and none compared the answer from one input form with another's. Here one set of objects (the
same pod web-0 and claim c1 in team-a, where they fit, and in team-b, where they cannot; a Deployment with its
ReplicaSet and pod in team-a; a ResourceClaimTemplate; an unused template lint objects to) is written as a `kind: List`
YAML, multi-document YAML, a JSON List, what `kubectl get -o json` and `-o yaml` print, the typed lists the API returns
(items without kind), a directory of files, and `kubectl dra dump` bundles of team-a and team-b. For each command and namespace form (none, -n team-a, -n team-b,
-A) every input form must give the same exit code and the same document, -o json and -o yaml the same document, text
and wide the verdict the JSON has, and an answer about one team never mention the other.

The CLI runs in-process (kubectl_dra.cli._main with stdout/stderr captured): about 1,500 invocations in well under a
minute, where subprocesses would take several."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import builders
import pytest
import yaml
from builders import claim, dclass, device, event, node, request, rslice
from clirun import Result, run

from kubectl_dra.gather.bundle import bundle
from kubectl_dra.model.snapshot import Snapshot

VERSION = ["--kubernetes-version", "1.37"]
DRIVER = "gpu.example.com"
TEAMS = ("team-a", "team-b")
OTHER = {"team-a": "team-b", "team-b": "team-a"}


# --- the objects -----------------------------------------------------------------------------------------------------


def _meta(name, ns=None, **extra):
    return {"name": name, **({"namespace": ns} if ns else {}), **extra}


def _sel(memory):
    return f'device.capacity["{DRIVER}"].memory.compareTo(quantity("{memory}")) >= 0'


def _request(memory):
    return [request(selectors=[_sel(memory)])]


def _team(ns, memory):
    """web-0 and its claim c1 in `ns`: 24Gi fits the free 40Gi gpu-0, 80Gi fits nothing."""
    pod = builders.pod("web-0", [("gpu", "claim", "c1")], ns=ns, uid=f"uid-web-0-{ns}", labels={"app": "web"})
    return [pod, claim("c1", _request(memory), ns=ns, uid=f"uid-c1-{ns}")]


def _deployment(ns):
    """Deployment trainer -> ReplicaSet trainer-5d9f -> pod trainer-5d9f-x1, Running on node-01 with the claim its
    ResourceClaimTemplate made, allocated gpu-1 and reserved for it."""
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta("trainer", ns, uid="uid-deploy"),
        "spec": {"selector": {"matchLabels": {"app": "trainer"}}},
    }
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": _meta(
            "trainer-5d9f",
            ns,
            uid="uid-rs",
            ownerReferences=[
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "trainer",
                    "uid": "uid-deploy",
                    "controller": True,
                }
            ],
        ),
        "spec": {"selector": {"matchLabels": {"app": "trainer"}}},
    }
    name = "trainer-5d9f-x1"
    pod = builders.pod(name, [("gpu", "template", "gpu-tmpl")], "node-01", {"gpu": f"{name}-gpu-7k2p"}, ns=ns,
                       uid="uid-trainer-x1", phase="Running", labels={"app": "trainer"})  # fmt: skip
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "trainer-5d9f", "uid": "uid-rs", "controller": True}
    ]
    generated = claim(
        f"{name}-gpu-7k2p",
        _request("24Gi"),
        results=[("gpu", "node-01", "gpu-1")],
        node="node-01",
        ns=ns,
        uid="uid-claim-x1",
        annotations={"resource.kubernetes.io/pod-claim-name": "gpu"},
        ownerReferences=[
            {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": "uid-trainer-x1", "controller": True}
        ],
    )
    generated["status"]["reservedFor"] = [{"resource": "pods", "name": name, "uid": "uid-trainer-x1"}]
    template = builders.template("gpu-tmpl", _request("24Gi"), ns=ns)
    return [deploy, rs, pod, template, generated]


def _event(ns):
    message = "0/2 nodes are available: 2 cannot allocate all claims."
    return event("web-0", "FailedScheduling", message, "2026-11-30T09:00:00Z", ns=ns, pod_uid=f"uid-web-0-{ns}")


def _node_agent(node_name: str) -> dict:
    """A DaemonSet's pod on the node: the input then shows what is bound there (NodeResourcesFit, analyze/pod/fit.py)."""
    agent = [{"name": "agent", "image": "agent:1"}]
    return builders.pod(f"agent-{node_name}", (), node_name, ns="kube-system", uid=f"uid-agent-{node_name}",
                        containers=agent, phase="Running")  # fmt: skip


CLUSTER = [
    dclass(),
    rslice("node-01-gpus", [device(f"gpu-{i}", memory="40Gi", attrs={"index": i}) for i in (0, 1)], "node-01"),
    *(node(n, allocatable={}) for n in ("node-01", "node-02")),
    *(_node_agent(n) for n in ("node-01", "node-02")),
]
# for lint: a template in team-b no pod uses, whose class does not exist and whose CEL reads an attribute no device has
UNUSED_TEMPLATE = builders.template(
    "spare", [request(cls="gpu-typo", selectors=[f'device.attributes["{DRIVER}"].model == "H100"'])], ns="team-b"
)
OBJECTS = [
    *_team("team-a", "24Gi"),
    *_deployment("team-a"),
    *_team("team-b", "80Gi"),
    _event("team-b"),
    UNUSED_TEMPLATE,
    *CLUSTER,
]


# --- the input forms -------------------------------------------------------------------------------------------------


def _kubectl_get(objs):
    """What `kubectl get TYPE,TYPE -o json|yaml` prints: a v1 List whose items carry kind and apiVersion, with the
    server's metadata (resourceVersion, creationTimestamp is left out so ages stay equal, managedFields)."""
    items = []
    for i, o in enumerate(objs):
        o = copy.deepcopy(o)
        o["metadata"]["resourceVersion"] = str(1000 + i)
        o["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update", "apiVersion": o["apiVersion"]}]
        items.append(o)
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


def _typed_lists(objs):
    """What the API returns for a list (`kubectl get --raw /api/v1/pods`): PodList, ResourceClaimList..., items
    without kind or apiVersion."""
    by_kind: dict[str, list] = {}
    for o in objs:
        by_kind.setdefault((o["kind"], o["apiVersion"]), []).append(
            {k: v for k, v in copy.deepcopy(o).items() if k not in ("kind", "apiVersion")}
        )
    return [
        {"apiVersion": api, "kind": f"{kind}List", "metadata": {"resourceVersion": "7"}, "items": items}
        for (kind, api), items in by_kind.items()
    ]


def _bundle(objs, namespace):
    """A `kubectl dra dump -n NAMESPACE` bundle, made by the dump's own code (gather/bundle.py): the Bundle header
    first. No server version, so the semantics assumed are the same as for the plain files."""
    snap = Snapshot(namespace=namespace, source="live", observed_at="2026-11-30T09:00:00Z")
    return bundle(copy.deepcopy(objs), snap, {"namespace": namespace, "selector": None})


def _write_forms(root: Path) -> dict[str, list[str]]:
    """Every input form of OBJECTS: name -> the --from-file arguments."""
    dump = lambda d: yaml.safe_dump(d, sort_keys=False)  # noqa: E731
    lst = {"apiVersion": "v1", "kind": "List", "items": copy.deepcopy(OBJECTS)}
    (root / "list.yaml").write_text(dump(lst))
    (root / "multi.yaml").write_text(yaml.safe_dump_all(copy.deepcopy(OBJECTS), sort_keys=False))
    (root / "list.json").write_text(json.dumps(lst, indent=2))
    get = root / "kubectl-get"
    get.mkdir()
    # one `kubectl get -o json` per resource type, as a user saves them
    namespaced = [o for o in OBJECTS if "namespace" in o["metadata"]]
    cluster = [o for o in OBJECTS if "namespace" not in o["metadata"]]
    (get / "namespaced.json").write_text(json.dumps(_kubectl_get(namespaced), indent=4))
    (get / "cluster.json").write_text(json.dumps(_kubectl_get(cluster), indent=4))
    (root / "kubectl-get.yaml").write_text(dump(_kubectl_get(OBJECTS)))
    (root / "typed-lists.yaml").write_text(yaml.safe_dump_all(_typed_lists(OBJECTS), sort_keys=False))
    tree = root / "tree"
    for o in OBJECTS:
        ns = o["metadata"].get("namespace")
        d = tree / ns if ns else tree / "cluster"
        d.mkdir(parents=True, exist_ok=True)
        name = f"{o['kind'].lower()}-{o['metadata']['name']}"
        if ns:
            (d / f"{name}.yaml").write_text(dump(o))
        else:
            (d / f"{name}.json").write_text(json.dumps(o))
    (root / "bundle-team-a.yaml").write_text(dump(_bundle(OBJECTS, "team-a")))
    (root / "bundle-team-b.json").write_text(json.dumps(_bundle(OBJECTS, "team-b")))
    return {
        "list-yaml": [str(root / "list.yaml")],
        "multi-doc-yaml": [str(root / "multi.yaml")],
        "list-json": [str(root / "list.json")],
        "kubectl-get-json": [str(get / "namespaced.json"), str(get / "cluster.json")],
        "kubectl-get-yaml": [str(root / "kubectl-get.yaml")],
        "typed-lists": [str(root / "typed-lists.yaml")],
        "directory": [str(tree)],
        "bundle-team-a": [str(root / "bundle-team-a.yaml")],
        "bundle-team-b": [str(root / "bundle-team-b.json")],
    }


PLAIN = ("list-yaml", "multi-doc-yaml", "list-json", "kubectl-get-json", "kubectl-get-yaml", "typed-lists", "directory")
BUNDLES = {"bundle-team-a": "team-a", "bundle-team-b": "team-b"}


@pytest.fixture(scope="module")
def forms(tmp_path_factory) -> dict[str, list[str]]:
    return _write_forms(tmp_path_factory.mktemp("user-paths"))


# --- running the CLI in-process --------------------------------------------------------------------------------------


# (clirun.run: the CLI in this process)


# --- what an answer says ---------------------------------------------------------------------------------------------


def comparable(doc):
    """The answer as every input form must give it. A bundle is a live gather's record, and DRA003 says so ("the
    scheduler's own feature gates and in-flight allocations are not visible through the API"): that clause is cut."""
    if doc is None:
        return None
    doc = copy.deepcopy(doc)
    for d in doc.get("items", [doc]) if doc.get("kind") == "List" else [doc]:
        for f in d.get("findings") or []:
            if f["code"] == "DRA003":
                f["message"] = f["message"].split("; the scheduler's own")[0]
    return doc


def verdicts_json(doc) -> list:
    """The verdict(s) of a JSON answer, in the words text uses."""
    kind = doc.get("kind")
    if kind == "List":
        return [v for item in doc["items"] for v in verdicts_json(item)]
    if kind == "Diagnosis":
        v = doc["verdict"]
        return ["Blocked" if v["blocked"] else "OK" if v["determined"] else "Undetermined"]
    if kind == "MatchResult":
        return ["yes" if doc["satisfiable"] else "no"]
    if kind == "Status":
        return sorted(f"{i['pod']} {i['state']}" for i in doc["items"])
    if kind == "DeviceInventory":
        return sorted(f"{i['device']} {i['state']}" for i in doc["items"])
    raise AssertionError(f"unknown answer kind {kind}")


def verdicts_text(text: str, kind: str) -> list:
    if kind in ("Diagnosis", "List"):
        return [m.split(":")[0] for m in re.findall(r"^Verdict:\s+(.*)$", text, re.M)]
    if kind == "MatchResult":
        return re.findall(r"^Satisfiable:\s+(\w+)", text, re.M)
    if kind == "Status":
        lines = text.splitlines()
        head = next((i for i, line in enumerate(lines) if line.split()[:1] in (["POD"], ["NAMESPACE"])), None)
        if head is None:
            return []
        cols = lines[head].split()
        rows = [dict(zip(cols, line.split())) for line in lines[head + 1 :] if line.strip()]
        return sorted(f"{r['POD']} {r['STATE']}" for r in rows)
    return None  # devices: its text is a summary; its JSON is compared across forms


# --- the matrix ------------------------------------------------------------------------------------------------------

COMMANDS = {
    "explain pod NAME": ["explain", "pod", "web-0"],
    "explain TYPE/NAME": ["explain", "pod/web-0"],
    "explain pod -l": ["explain", "pod", "-l", "app=web"],
    "explain deploy/NAME": ["explain", "deploy/trainer"],
    "explain claim": ["explain", "claim", "c1"],
    "match claim NAME": ["match", "claim", "c1"],
    "match claim -f": ["match", "claim", "-f", "{claim_file}"],
    "status": ["status"],
    "status -l": ["status", "-l", "app in (web,trainer)"],
    "devices": ["devices", "--node", "node-01"],
}
NAMESPACE_FORMS = {"context": [], "-n team-a": ["-n", "team-a"], "-n team-b": ["--namespace", "team-b"], "-A": ["-A"]}
OUTPUTS = ("json", "yaml", "text", "wide")

# What each command answers where, on the plain files (namespace form -> exit code); the bundles of team-a and team-b
# answer for their own namespace without -n. web-0/c1: fits in team-a (0), blocked in team-b (1), ambiguous with -A
# (2). trainer: only in team-a. Without -n plain files are read in `default`, where nothing is: status then exits 2,
# naming team-a and team-b (a gate must not pass on a namespace it only assumed).
EXPECTED = {
    "explain pod NAME": {"context": 2, "-n team-a": 0, "-n team-b": 1, "-A": 2},
    "explain TYPE/NAME": {"context": 2, "-n team-a": 0, "-n team-b": 1, "-A": 2},
    "explain pod -l": {"context": 0, "-n team-a": 0, "-n team-b": 1, "-A": 1},
    "explain deploy/NAME": {"context": 2, "-n team-a": 0, "-n team-b": 2, "-A": 0},
    "explain claim": {"context": 2, "-n team-a": 0, "-n team-b": 1, "-A": 2},
    "match claim NAME": {"context": 2, "-n team-a": 0, "-n team-b": 1, "-A": 2},
    "match claim -f": {"context": 1, "-n team-a": 1, "-n team-b": 1, "-A": 1},
    "status": {"context": 2, "-n team-a": 0, "-n team-b": 1, "-A": 1},
    "status -l": {"context": 2, "-n team-a": 0, "-n team-b": 1, "-A": 1},
    "devices": {"context": 0, "-n team-a": 0, "-n team-b": 0, "-A": 0},  # cluster-scoped: -n and -A change nothing
}
# the namespace an answer is about (None: several or none), for the leak check
ABOUT = {"context": None, "-n team-a": "team-a", "-n team-b": "team-b", "-A": None}
# devices is cluster-scoped: it lists every namespace's holders of a device (a drain needs them all) whatever -n, -A or
# a bundle's namespace say (test_devices_is_the_same_in_every_namespace_form): no leak check
CLUSTER_WIDE = {"devices"}


@pytest.fixture(scope="module")
def claim_file(tmp_path_factory) -> str:
    """A ResourceClaim manifest without a namespace, as `match claim -f` is given before kubectl apply: team-b's
    80Gi request, which no device satisfies in any namespace."""
    p = tmp_path_factory.mktemp("manifest") / "claim.yaml"
    c = copy.deepcopy(_team("team-b", "80Gi")[1])
    del c["metadata"]["namespace"], c["metadata"]["uid"]
    c["metadata"]["name"] = "new-claim"
    p.write_text(yaml.safe_dump(c))
    return str(p)


def _args(command, ns_form, claim_file):
    return [a.replace("{claim_file}", claim_file) for a in COMMANDS[command]] + NAMESPACE_FORMS[ns_form] + VERSION


def _expected_code(command, ns_form, form):
    if form in BUNDLES and ns_form == "context" and command not in CLUSTER_WIDE:
        return EXPECTED[command]["-n " + BUNDLES[form]]  # the bundle's own namespace
    return EXPECTED[command][ns_form]


def _about(command, ns_form, form):
    if command in CLUSTER_WIDE:
        return None
    if form in BUNDLES and ns_form == "context":
        return BUNDLES[form]
    return ABOUT[ns_form]


def _check_one_answer(command, ns_form, form, runs: dict[str, Result]):
    """One input form: the four outputs agree with each other and with what is expected."""
    want = _expected_code(command, ns_form, form)
    where = f"{command} {ns_form} from {form}"
    for out, r in runs.items():
        assert r.code == want, f"{where} -o {out}: {r!r}"
        assert "Traceback" not in r.err and "internal error" not in r.err, f"{where} -o {out}: {r!r}"
        about = _about(command, ns_form, form)
        if about:
            assert OTHER[about] not in r.out, f"{where} -o {out}: {OTHER[about]} leaked into the answer for {about}"
    js, ym = runs["json"], runs["yaml"]
    if not js.out:  # an error before any report, or nothing to report: one line, whatever the output format
        for out, r in runs.items():
            assert r.out == "" and r.err.count("\n") == 1, f"{where} -o {out}: {r!r}"
            assert r.err.startswith("error: ") == (want == 2), f"{where} -o {out}: {r!r}"
            assert r.err == js.err, f"{where}: -o {out} and -o json say different things"
        return None
    doc = json.loads(js.out)
    assert yaml.safe_load(ym.out) == doc, f"{where}: -o yaml is not the -o json document"
    about = _about(command, ns_form, form)
    if about:
        assert about in js.out, f"{where}: the answer does not say it is about {about}"
    expected_verdicts = verdicts_json(doc)
    for out in ("text", "wide"):
        got = verdicts_text(runs[out].out, doc["kind"])
        if got is not None:
            assert got == expected_verdicts, f"{where} -o {out}: verdicts {got}, JSON says {expected_verdicts}"
    return doc


@pytest.mark.parametrize("ns_form", NAMESPACE_FORMS)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_input_form_and_output_gives_the_same_answer(forms, claim_file, command, ns_form):
    args = _args(command, ns_form, claim_file)
    docs = {}
    for form, paths in forms.items():
        files = [a for p in paths for a in ("--from-file", p)]
        runs = {out: run(args + files + ["-o", out]) for out in OUTPUTS}
        docs[form] = (comparable(_check_one_answer(command, ns_form, form, runs)), runs["json"].err)
    # every plain form: the same document (or the same error) as the kind: List YAML
    ref = docs["list-yaml"]
    for form in PLAIN:
        assert docs[form] == ref, f"{command} {ns_form}: {form} answers differently from list-yaml"
    # a bundle with -n or -A answers as the plain files; without, as the files with -n its namespace (the next test).
    # Except match -f -A: a manifest without a namespace goes in the base namespace, which -A leaves as the bundle's.
    for form in BUNDLES:
        if ns_form.startswith("-n") or (ns_form == "-A" and command != "match claim -f"):
            assert docs[form] == ref, f"{command} {ns_form}: {form} answers differently from list-yaml"


@pytest.mark.parametrize("form", list(BUNDLES))
def test_a_bundle_without_dash_n_answers_as_the_files_with_its_namespace(forms, claim_file, form):
    ns = BUNDLES[form]
    for command in (c for c in COMMANDS if c not in CLUSTER_WIDE):
        bundled = run(_args(command, "context", claim_file) + ["--from-file", forms[form][0], "-o", "json"])
        files = run(_args(command, "-n " + ns, claim_file) + ["--from-file", forms["list-yaml"][0], "-o", "json"])
        assert (bundled.code, bundled.err) == (files.code, files.err), command
        if files.out:
            assert comparable(json.loads(bundled.out)) == comparable(json.loads(files.out)), command


def test_devices_is_the_same_in_every_namespace_form(forms):
    docs = {
        (form, ns_form): run(["devices", "--node", "node-01", *flags, "--from-file", forms[form][0], "-o", "json"])
        for form in ("list-yaml", *BUNDLES)
        for ns_form, flags in NAMESPACE_FORMS.items()
    }
    assert all(r.code == 0 for r in docs.values()), docs
    holders = {k: sorted(p for i in json.loads(r.out)["items"] for p in i["pods"]) for k, r in docs.items()}
    assert all(h == ["team-a/trainer-5d9f-x1 (Running)"] for h in holders.values()), holders


def test_the_two_teams_get_opposite_verdicts(forms):
    """The input itself: if both teams got the same answer, the leak checks above could not tell them apart."""
    a = run(["explain", "pod", "web-0", "-n", "team-a", "--from-file", forms["list-yaml"][0], "-o", "json", *VERSION])
    b = run(["explain", "pod", "web-0", "-n", "team-b", "--from-file", forms["list-yaml"][0], "-o", "json", *VERSION])
    assert (a.code, b.code) == (0, 1), (a, b)
    assert (
        json.loads(a.out)["pod"]["uid"] == "uid-web-0-team-a" and json.loads(b.out)["pod"]["uid"] == "uid-web-0-team-b"
    )
    deploy = run(["explain", "deploy/trainer", "-n", "team-a", "--from-file", forms["directory"][0], "-o", "json"])
    pods = [i["pod"]["name"] for i in json.loads(deploy.out)["items"]]
    assert deploy.code == 0 and pods == ["trainer-5d9f-x1"], deploy


def test_dash_a_with_a_name_in_both_teams_names_both(forms):
    for cmd in (["explain", "pod", "web-0"], ["explain", "claim", "c1"], ["match", "claim", "c1"]):
        r = run([*cmd, "-A", "--from-file", forms["kubectl-get-yaml"][0]])
        assert r.code == 2 and "several namespaces (team-a, team-b)" in r.err, r


def test_status_all_namespaces_lists_both_teams(forms):
    r = run(["status", "-A", "--from-file", forms["typed-lists"][0], "-o", "json", *VERSION])
    rows = sorted((i["namespace"], i["pod"], i["state"]) for i in json.loads(r.out)["items"])
    assert [(ns, pod) for ns, pod, _ in rows] == [
        ("team-a", "trainer-5d9f-x1"),
        ("team-a", "web-0"),
        ("team-b", "web-0"),
    ], rows
    assert r.code == 1 and {s for ns, _, s in rows if ns == "team-a"} == {"OK"}, r


LINT_OUTPUTS = ("text", "json", "sarif")


def test_lint_gives_the_same_findings_from_every_input_form(forms):
    """lint reads every namespace (it takes no -n): the same findings, whichever form the manifests come in."""
    findings = {}
    for form, paths in forms.items():
        files = [a for p in paths for a in ("--from-file", p)]
        runs = {out: run(["lint", *files, "-o", out]) for out in LINT_OUTPUTS}
        codes = {r.code for r in runs.values()}
        assert len(codes) == 1 and codes <= {0, 1}, (form, runs)
        doc = json.loads(runs["json"].out)
        sarif = json.loads(runs["sarif"].out)
        found = sorted(
            (f["code"], f["severity"], f.get("message", "")) for f in doc.get("findings", doc.get("items", []))
        )
        assert len(sarif["runs"][0]["results"]) == len(found), form
        text = sorted(re.findall(r"(DRA\d+) (error|warning|info): ", runs["text"].out))
        assert text == sorted((code, sev) for code, sev, _ in found), (form, runs["text"])
        findings[form] = (codes.pop(), found)
    ref = findings["list-yaml"]
    assert ref[0] == 1 and [code for code, _, _ in ref[1]] == ["DRA703", "DRA708"], ref
    for form in forms:
        assert findings[form] == ref, f"lint: {form} finds differently from list-yaml"


@pytest.mark.parametrize("ns_form", ["-n team-a", "-n team-b", "-A"])
@pytest.mark.parametrize("command", ["explain pod NAME", "match claim NAME", "status"])
def test_stdin_answers_as_the_file(forms, claim_file, command, ns_form):
    args = _args(command, ns_form, claim_file) + ["-o", "json"]
    data = Path(forms["list-yaml"][0]).read_bytes()
    piped = run(args + ["--from-file", "-"], stdin=data)
    files = run(args + ["--from-file", forms["list-yaml"][0]])
    assert (piped.code, piped.out, piped.err) == (files.code, files.out, files.err)
