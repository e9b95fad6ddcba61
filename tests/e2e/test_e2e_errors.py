"""Errors from a real API server: kubectl-dra exits 2 ("could not do its job") with one
`error: ...` line, as docs/exit-codes.md says, and never mistakes an error Status for data."""

from __future__ import annotations

import pytest
from e2e_helpers import clusterlib

pytestmark = pytest.mark.e2e


def test_pod_not_found(cluster, namespace):
    r = cluster.kubectl_dra("explain", "pod", "no-such-pod", "-n", namespace, "-o", "json")
    assert r.code == 2, str(r)
    assert r.stderr.startswith("error:") and "no-such-pod" in r.stderr, str(r)
    assert "not found" in r.stderr.lower(), str(r)


def test_claim_not_found(cluster, namespace):
    r = cluster.kubectl_dra("match", "claim", "no-such-claim", "-n", namespace, "-o", "json")
    assert r.code == 2, str(r)
    assert "no-such-claim" in r.stderr, str(r)


def test_no_permission_to_read_the_pod(cluster, namespace, tmp_path):
    """A ServiceAccount with no role at all: the pod itself is forbidden, nothing to explain."""
    cluster.api.post(
        f"/api/v1/namespaces/{namespace}/serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nobody"}},
    )
    cluster.api.post(
        f"/api/v1/namespaces/{namespace}/pods",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "plain"},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
        },
    )
    kc = cluster.token_kubeconfig(namespace, "nobody", tmp_path / "nobody.kubeconfig")
    r = cluster.kubectl_dra("explain", "pod", "plain", "-n", namespace, kubeconfig=kc)
    assert r.code == 2, str(r)
    assert r.stderr.startswith("error:"), str(r)
    assert "forbidden" in r.stderr.lower() or "cannot get" in r.stderr.lower(), str(r)


def test_bad_credentials(cluster, namespace, tmp_path):
    kc = tmp_path / "bad.kubeconfig"
    clusterlib.write_kubeconfig(kc, cluster.server, cluster.dir / "pki", user="bad", token="not-a-valid-token")
    r = cluster.kubectl_dra("explain", "pod", "anything", "-n", namespace, kubeconfig=str(kc))
    assert r.code == 2, str(r)
    assert "unauthorized" in r.stderr.lower(), str(r)
