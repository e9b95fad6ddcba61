"""The pod-level paths of a default 1.37 cluster on literals: the scheduler's word, a newer server, PodGroup
claims, device health (the goldens in tests/scenarios cover the same through the command line)."""

from __future__ import annotations

from builders import pod

from kubectl_dra.analyze.pod.binding import prebind_failure
from kubectl_dra.analyze.pod.health import health_findings
from kubectl_dra.analyze.pod.podgroup import reserved_for_pod
from kubectl_dra.analyze.pod.scheduler import scheduler_word
from kubectl_dra.analyze.reports.explain import explain_pod
from kubectl_dra.features import NEWEST, Semantics
from kubectl_dra.model.snapshot import Snapshot


def ev(reason, message, time, type_="Warning"):
    return {
        "type": type_,
        "reason": reason,
        "message": message,
        "time": time,
        "firstTime": time,
        "count": 1,
        "object": {"kind": "Pod", "namespace": "default", "name": "p", "uid": ""},
        "source": {"component": "default-scheduler", "host": ""},
        "name": time,
    }


POD = pod("p", (), uid="u", containers=[])


def test_the_newest_scheduler_event_is_its_word_and_the_histogram_counts_dra_nodes():
    w = scheduler_word(
        POD,
        [
            ev(
                "FailedScheduling",
                "0/3 nodes are available: 1 Insufficient cpu, 2 cannot allocate "
                "all claims. preemption: 0/3 nodes are available: 3 Preemption is not helpful.",
                "t1",
            )
        ],
    )
    assert (w.state, w.nodes_total, w.dra_nodes, w.non_dra_nodes) == ("unschedulable", 3, 2, 1)
    w = scheduler_word(
        POD,
        [
            ev("FailedScheduling", "0/3 nodes are available: 3 cannot allocate all claims.", "t1"),
            ev("BindingConditionsPending", "waiting for binding conditions for device on node n", "t2", "Normal"),
        ],
    )
    assert w.state == "binding" and w.about_dra


def test_a_prefilter_rejection_applies_to_every_node():
    w = scheduler_word(
        POD,
        [
            ev(
                "FailedScheduling",
                "0/3 nodes are available: request gpu: device class x does not exist. no new claims to deallocate",
                "t1",
            )
        ],
    )
    assert (w.nodes_total, w.dra_nodes) == (3, 3)


def test_without_events_the_pod_scheduled_condition_speaks():
    pod = dict(
        POD,
        status={
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "SchedulerError",
                    "message": 'running PreBind plugin "DynamicResources": boom',
                }
            ]
        },
    )
    w = scheduler_word(pod, [])
    assert w.state == "error" and w.about_dra


def test_a_binding_failure_counts_until_a_new_wait_begins():
    fail = ev(
        "FailedScheduling",
        'running PreBind plugin "DynamicResources": device binding failed: claim=c, reason=R, message="m"',
        "t2",
    )
    assert prebind_failure([fail], []).code == "DRA422"
    old = ev("FailedScheduling", 'running PreBind plugin "DynamicResources": claim c binding timeout', "t1")
    assert prebind_failure([old], []).code == "DRA423"  # the 1.34/1.35 wording
    assert prebind_failure([fail, ev("BindingConditionsPending", "waiting", "t3", "Normal")], []) is None


def test_a_newer_server_says_its_semantics_are_assumed():
    sem = Semantics.for_version(NEWEST, version_source="server", newer_server="v1.39.0")
    r = explain_pod(Snapshot(pods=(POD,), source="live"), sem, "default", "p")
    dra003 = next(f for f in r.findings if f.code == "DRA003")
    assert "v1.39.0, newer than the newest supported minor 1.38" in dra003.message
    assert r.verdict.summary.endswith("(assuming Kubernetes 1.38 semantics for a v1.39.0 server)")
    assert r.to_dict()["semantics"]["serverVersion"] == "v1.39.0"


def test_a_podgroup_reservation_counts_for_its_pods_by_name():
    pod = dict(POD, spec={"schedulingGroup": {"podGroupName": "gang"}})
    claim = {
        "status": {
            "reservedFor": [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "gang", "uid": "g"}]
        }
    }
    assert reserved_for_pod(pod, claim)
    assert not reserved_for_pod(POD, claim)


def test_unhealthy_and_unknown_devices_are_reported_healthy_ones_not():
    pod = dict(
        POD,
        status={
            "containerStatuses": [
                {
                    "name": "app",
                    "allocatedResourcesStatus": [
                        {
                            "name": "claim:gpu",
                            "resources": [
                                {"resourceID": "d/p/a", "health": "Healthy"},
                                {"resourceID": "d/p/b", "health": "Unknown"},
                            ],
                        },
                        {"name": "nvidia.com/gpu", "resources": [{"resourceID": "x", "health": "Unhealthy"}]},
                    ],
                }
            ]
        },
    )
    fs = health_findings(pod)
    assert [f.evidence["device"] for f in fs] == ["d/p/b"]  # device-plugin resources are not DRA's


def test_a_server_without_resource_k8s_io_is_dra102_not_a_permission_problem():
    from kubectl_dra.model.snapshot import Gap

    gap = Gap(
        "get", "resource.k8s.io", None, "not-served", "the server does not serve resource.k8s.io/v1, v1beta2 or v1beta1"
    )
    pod = dict(POD, spec={"resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}], "containers": []})
    r = explain_pod(Snapshot(pods=(pod,), gaps=(gap,), source="live"), Semantics.for_version(NEWEST), "default", "p")
    codes = [f.code for f in r.findings]
    assert "DRA102" in codes and "DRA101" not in codes
    assert r.verdict.blocked
