"""deploy/: the manifests parse and hang together, the ClusterRole is docs/rbac.md's exporter role, the Deployment
is what a restricted namespace admits and probes what the exporter serves, and every alert names only metrics the
exporter exports. promtool and a container build run where they are at hand, and are skipped with the reason where
they are not."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from kubectl_dra.analyze.reports.status import scan
from kubectl_dra.cli.exporter import Exporter, parse_bind_address
from kubectl_dra.features import Semantics
from kubectl_dra.gather.files import load_files
from kubectl_dra.gather.watch import LiveSession

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def manifests() -> dict[str, dict]:
    out = {}
    for name in yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())["resources"]:
        docs = [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]
        assert len(docs) == 1, name
        out[docs[0]["kind"]] = docs[0]
    return out


def triples(rules: list[dict]) -> set[tuple[str, str, str]]:
    return {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}


def test_every_manifest_is_listed_and_parses():
    listed = set(yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())["resources"])
    assert listed == {p.name for p in DEPLOY.glob("*.yaml")} - {"kustomization.yaml"}
    kinds = manifests()
    assert set(kinds) == {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment", "Service",
                          "ServiceMonitor", "PrometheusRule"}  # fmt: skip
    binding = kinds["ClusterRoleBinding"]
    assert binding["roleRef"]["name"] == kinds["ClusterRole"]["metadata"]["name"]
    sa = kinds["ServiceAccount"]["metadata"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["name"], "namespace": sa["namespace"]}]


def test_the_cluster_role_is_the_documented_one_and_reads_only():
    rules = manifests()["ClusterRole"]["rules"]
    doc = (ROOT / "docs" / "rbac.md").read_text().split("## The exporter", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", doc, re.S).group(1)
    assert triples(rules) == triples(yaml.safe_load(block)["rules"])
    assert {v for _, _, v in triples(rules)} == {"list", "watch"}


def test_the_deployment_is_restricted_and_probes_what_the_exporter_serves():
    kinds = manifests()
    spec = kinds["Deployment"]["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == kinds["ServiceAccount"]["metadata"]["name"]
    assert spec["securityContext"]["runAsNonRoot"] is True
    (c,) = spec["containers"]
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert c["securityContext"]["allowPrivilegeEscalation"] is False and c["securityContext"]["capabilities"] == {
        "drop": ["ALL"]
    }
    assert c["resources"]["requests"] and c["resources"]["limits"]["memory"]
    bind = next(a.split("=", 1)[1] for a in c["args"] if a.startswith("--metrics-bind-address="))
    (port,) = c["ports"]
    assert parse_bind_address(bind)[1] == port["containerPort"]
    assert (c["livenessProbe"]["httpGet"]["path"], c["readinessProbe"]["httpGet"]["path"]) == ("/healthz", "/readyz")
    assert {"status", "--all-namespaces", "--watch"} <= set(c["args"])
    svc = kinds["Service"]["spec"]
    assert svc["selector"] == kinds["Deployment"]["spec"]["selector"]["matchLabels"]
    monitored = kinds["ServiceMonitor"]["spec"]["endpoints"][0]
    assert monitored["port"] == svc["ports"][0]["name"] and monitored["path"] == "/metrics"


def exported_names() -> set[str]:
    """The sample names of a real exporter's collect() after one answer (counters with _total)."""
    snap = load_files([str(ROOT / "tests" / "scenarios" / "status-all-namespaces" / "input.yaml")], None)
    sem = Semantics.for_version((1, 37))
    ex = Exporter("127.0.0.1:0", None, LiveSession(None, [], [], {}))
    ex.observe(snap, scan(snap, sem, None), sem)
    return {s.name for fam in ex.collect() for s in fam.samples}


def test_alerts_name_only_exported_metrics():
    names = exported_names()
    assert {"kubectl_dra_pod_status", "kubectl_dra_errors_total", "kubectl_dra_api_retries_total"} <= names
    rules = manifests()["PrometheusRule"]["spec"]["groups"][0]["rules"]
    assert {r["alert"] for r in rules} >= {"DRAPodBlocked", "DRAKubeletPluginNotServing", "DRAClassNoFreeDevice"}
    for r in rules:
        used = set(re.findall(r"\bkubectl_dra_\w+", r["expr"]))
        assert used and used <= names, (r["alert"], used - names)


@pytest.fixture(scope="module")
def promtool() -> str:
    """promtool on PATH, else Debian's pinned package fetched into the cache (tests/promtool.py); a fetch that fails
    fails the test: the rules are checked in CI, not skipped."""
    from promtool import ensure_promtool

    return ensure_promtool()


def rules_file(tmp_path) -> Path:
    """The PrometheusRule's spec as the rule file Prometheus and promtool read."""
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(manifests()["PrometheusRule"]["spec"]))
    return tmp_path / "rules.yaml"


@pytest.mark.install
def test_promtool_checks_the_rules(promtool, tmp_path):
    done = subprocess.run([promtool, "check", "rules", str(rules_file(tmp_path))], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.install
def test_promtool_fires_each_alert_on_the_series_the_exporter_writes(promtool, tmp_path):
    """tests/deploy/alerts_test.yaml: each alert fires after its `for:` with the labels and text a receiver gets,
    and stays quiet where it should (a pod placed before 15 minutes, a serving plugin, a class with a free device)."""
    rules_file(tmp_path)
    shutil.copy(ROOT / "tests" / "deploy" / "alerts_test.yaml", tmp_path / "alerts_test.yaml")
    done = subprocess.run(
        [promtool, "test", "rules", "alerts_test.yaml"], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rules = {r["alert"] for r in manifests()["PrometheusRule"]["spec"]["groups"][0]["rules"]}
    tested = set(re.findall(r"alertname: (\w+)", (ROOT / "tests" / "deploy" / "alerts_test.yaml").read_text()))
    assert tested == rules, rules ^ tested


@pytest.mark.install
def test_promtool_catches_a_wrong_expectation(promtool, tmp_path):
    """The alert tests can fail: the same file with one expected label changed is rejected."""
    rules_file(tmp_path)
    text = (ROOT / "tests" / "deploy" / "alerts_test.yaml").read_text()
    assert "pod: trainer-0" in text
    (tmp_path / "alerts_test.yaml").write_text(text.replace("pod: trainer-0", "pod: trainer-1", 1))
    done = subprocess.run(
        [promtool, "test", "rules", "alerts_test.yaml"], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode != 0 and "trainer-1" in done.stdout + done.stderr, done.stdout + done.stderr


def test_the_image_builds_from_the_standalone_archive():
    builder = next((b for b in ("podman", "docker") if shutil.which(b)), None)
    if builder is None:
        pytest.skip("no container builder (podman, docker) is installed")
    if subprocess.run([builder, "info"], capture_output=True, timeout=30).returncode != 0:
        pytest.skip(f"{builder} is installed but cannot reach its daemon or runtime ({builder} info fails)")
    archives = sorted((ROOT / "dist").glob("kubectl-dra_linux_*.tar.gz"))
    if not archives:
        pytest.skip("no standalone archive in dist/: `make dist` builds it")
    tag = "localhost/kubectl-dra-test:latest"
    arch = archives[0].name.removeprefix("kubectl-dra_linux_").removesuffix(".tar.gz")
    build = [builder, "build", "-f", str(DEPLOY / "Containerfile"), "--build-arg", f"TARGETARCH={arch}", "-t", tag]
    done = subprocess.run([*build, str(ROOT / "dist")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    ran = subprocess.run([builder, "run", "--rm", tag, "version"], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0 and "0." in ran.stdout, ran.stdout + ran.stderr
