"""Fixtures for the end-to-end suite: a real control plane (tests/cluster/cluster.py).

`cluster` (session) builds or reuses the binaries and starts etcd, kube-apiserver,
kube-controller-manager, kube-scheduler and the fake-node heartbeat with the version's default
feature gates; `gates_cluster` (module) starts a second control plane with the DRA gates on;
`cluster_1_38` (module) one built from k8s.io/kubernetes v1.38.0-beta.0 (tests/cluster/v1.38), default gates;
`nodealloc_cluster` (module, per minor) v1.37.2 and v1.38.0-beta.0 with DRANodeAllocatableResources on;
`alpha_cluster` (module) v1.37.2 with the allocator's alpha gates on (compatibility groups, derived attributes).
If KUBECTL_DRA_CLUSTER_DIR names a running cluster (`make cluster-up`), `cluster` reuses it and
leaves it running. A failed build or start is a test error, never a skip.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest
from dra_objects import (  # noqa: F401 (fixtures, for every e2e module)
    alpha_scenario,
    gang_scenario,
    gates_scenario,
    nodealloc_scenario,
    scenario,
    scenario_1_38,
)
from e2e_helpers import Cluster, clusterlib


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


def _start(name: str, gates: str, k8s: str | None = None) -> tuple[Cluster, Path]:
    runs = clusterlib.cache_dir() / "cluster" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    state_dir = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=runs))
    try:
        state = clusterlib.up(state_dir, gates=gates, k8s=k8s)
    except Exception as exc:  # a failed start fails the tests (never a skip)
        pytest.fail(f"could not start the {name} control plane (logs kept in {state_dir}):\n{exc}", pytrace=False)
    return Cluster(state), state_dir


def _stop(state_dir: Path) -> None:
    keep = os.environ.get("KUBECTL_DRA_KEEP_CLUSTER") == "1"
    clusterlib.down(state_dir, keep=keep)


@pytest.fixture(scope="session")
def cluster():
    existing = os.environ.get("KUBECTL_DRA_CLUSTER_DIR")
    if existing and clusterlib.read_state(Path(existing)):
        yield Cluster(clusterlib.read_state(Path(existing)))
        return
    c, state_dir = _start("default", "")
    yield c
    _stop(state_dir)


@pytest.fixture(scope="module")
def gates_cluster():
    c, state_dir = _start("gates", clusterlib.DRA_GATES)
    yield c
    _stop(state_dir)


@pytest.fixture(scope="module")
def gang_cluster():
    """Gang scheduling on (GenericWorkload, beta and off by default in 1.37; PodGroups at scheduling.k8s.io/v1beta1,
    which cluster.py serves with it). The one gate gangs need in 1.37: there is no GangScheduling gate, the scheduler
    adds its GangScheduling plugin to the default profile when GenericWorkload is on (pkg/scheduler/apis/config/v1
    default_plugins.go). The gates that depend on it (CompositePodGroup, PodGroupPreemptionPolicy,
    TopologyAwareWorkloadScheduling, WorkloadWithJob: alpha; DRAWorkloadResourceClaims: beta, off) stay off: each
    adds what kubectl-dra leaves undetermined or, for topology, scoring plugins of its own."""
    c, state_dir = _start("gangs", "GenericWorkload=true")
    yield c
    _stop(state_dir)


NODEALLOC_GATES = "DRANodeAllocatableResources=true"

# The 1.37 allocator's alpha gates whose rules kubectl-dra models (allocator/compat.py, allocator/derived.py): with
# them on, the scheduler runs its experimental allocator channel
ALPHA_GATES = "DRADeviceCompatibilityGroups=true,DRADerivedAttributes=true"


@pytest.fixture(scope="module")
def alpha_cluster():
    """The v1.37.2 control plane with the allocator's alpha gates on (ALPHA_GATES)."""
    c, state_dir = _start("alpha", ALPHA_GATES)
    yield c
    _stop(state_dir)


@pytest.fixture(scope="module", params=["1.37", "1.38"])
def nodealloc_cluster(request):
    """DRANodeAllocatableResources on (alpha and off in 1.37 and 1.38): devices that map node cpu and memory, on the
    v1.37.2 and the v1.38.0-beta.0 control planes. A running cluster KUBECTL_DRA_CLUSTER_DIR names is reused for its
    minor when it runs with exactly that gate (`make cluster-up GATES=... [K8S=1.38]`)."""
    existing = os.environ.get("KUBECTL_DRA_CLUSTER_DIR")
    state = clusterlib.read_state(Path(existing)) if existing else None
    if state and state.get("gates") == NODEALLOC_GATES and state.get("version", "").startswith(f"v{request.param}."):
        yield Cluster(state)
        return
    c, state_dir = _start(
        f"nodealloc-{request.param}", NODEALLOC_GATES, k8s=None if request.param == "1.37" else "1.38"
    )
    yield c
    _stop(state_dir)


@pytest.fixture(scope="module")
def cluster_1_38():
    """The v1.38.0-beta.0 control plane (built on first use by tests/cluster/build.sh 1.38), default gates."""
    c, state_dir = _start("v1.38", "", k8s="1.38")
    yield c
    _stop(state_dir)


@pytest.fixture
def namespace(cluster, request):
    ns = cluster.create_namespace(re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:40].strip("-"))
    yield ns
    cluster.delete_namespace(ns)
