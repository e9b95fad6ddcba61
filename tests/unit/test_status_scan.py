"""The scan's selection and columns (kubectl dra status), on literals: which pods use DRA, who owns them, their AGE
as kubectl prints it, and the order and exit semantics of the report."""

from __future__ import annotations

import builders
import pytest
from builders import dclass

from kubectl_dra.analyze.pod.extended import uses_dra
from kubectl_dra.analyze.reports.status import Row, ScanReport
from kubectl_dra.features import Semantics
from kubectl_dra.model.meta import owner_of
from kubectl_dra.model.times import human_age

S37 = Semantics.for_version((1, 37))
S34 = Semantics.for_version((1, 34))
EXT_CLASS = dclass("gpu", "", extendedResourceName="example.com/gpu")


def pod(spec=None, **meta):
    p = builders.pod("p", (), uid=False, phase=None, **{"containers": [], **(spec or {})})
    p["metadata"].update(meta)
    return p


def test_uses_dra_claims_templates_and_extended_resources():
    assert uses_dra(pod({"resourceClaims": [{"name": "g", "resourceClaimTemplateName": "t"}]}), [], S37)
    ext = pod({"containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": "1"}}}]})
    assert uses_dra(ext, [EXT_CLASS], S37)
    assert not uses_dra(ext, [], S37)  # no class maps the resource: a device plugin's
    assert not uses_dra(ext, [EXT_CLASS], S34)  # DRAExtendedResource is off by default in 1.34
    assert not uses_dra(pod({"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}), [], S37)


def _ref(kind, name, controller=True):
    return {"kind": kind, "name": name, "controller": controller}


def test_owner_follows_the_controller_and_a_replicasets_deployment():
    assert owner_of(pod()) is None
    assert owner_of(pod(ownerReferences=[_ref("StatefulSet", "db", controller=False)])) is None
    assert owner_of(pod(ownerReferences=[_ref("StatefulSet", "db")])) == "StatefulSet/db"
    # The ReplicaSet's name is the Deployment's plus the pod-template-hash (as the Deployment controller names it).
    p = pod(ownerReferences=[_ref("ReplicaSet", "web-7d9c8b6f5")], labels={"pod-template-hash": "7d9c8b6f5"})
    assert owner_of(p) == "Deployment/web"
    # Without the hash (a bare ReplicaSet) it stays the ReplicaSet; a known ReplicaSet says who owns it.
    bare = pod(ownerReferences=[_ref("ReplicaSet", "web-7d9c8b6f5")])
    assert owner_of(bare) == "ReplicaSet/web-7d9c8b6f5"
    rs = {
        "kind": "ReplicaSet",
        "metadata": {"name": "web-7d9c8b6f5", "namespace": "default", "ownerReferences": [_ref("Deployment", "api")]},
    }
    assert owner_of(p, (rs,)) == "Deployment/api"
    other_ns = dict(rs, metadata=dict(rs["metadata"], namespace="other"))
    assert owner_of(p, (other_ns,)) == "Deployment/web"


@pytest.mark.parametrize(
    "seconds,text",
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (125, "2m5s"),
        (600, "10m"),
        (3 * 3600 - 1, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 60, "3h1m"),
        (8 * 3600, "8h"),
        (47 * 3600, "47h"),
        (48 * 3600, "2d"),
        (50 * 3600, "2d2h"),
        (8 * 86400, "8d"),
        (2 * 365 * 86400, "2y"),
        (2 * 365 * 86400 + 86400, "2y1d"),
        (8 * 365 * 86400, "8y"),
    ],
)
def test_age_is_kubectls_human_duration(seconds, text):
    assert human_age(seconds) == text


def _row(state, ns="default", name="p"):
    return Row(ns, name, None, "Pending", None, state, None, "why", (), "1m")


def test_report_exit_semantics():
    ok = ScanReport((_row("OK"),), {"namespace": "default", "selector": None}, {})
    assert not ok.blocked and ok.determined
    blocked = ScanReport((_row("Blocked"), _row("OK")), {"namespace": None, "selector": None}, {})
    assert blocked.blocked and blocked.determined
    unknown = ScanReport((_row("Unknown"),), {"namespace": None, "selector": None}, {})
    assert not unknown.determined
    # A namespace the scan could not list leaves even an all-OK scan open.
    partial = ScanReport((_row("OK"),), {"namespace": None, "selector": None}, {}, unseen=("pods in namespace b",))
    assert not partial.determined and partial.summary == "1 pod uses DRA: 0 blocked, 0 undetermined, 1 ok"
    assert blocked.summary == "2 pods use DRA: 1 blocked, 0 undetermined, 1 ok"
    d = blocked.to_dict()
    assert d["kind"] == "Status" and d["summary"]["blocked"] == 1 and d["summary"]["ok"] == 1
