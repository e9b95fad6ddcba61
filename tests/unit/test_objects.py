"""model/objects.py: the shapes analysis walks are checked on the way in, with one line naming the object."""

from __future__ import annotations

import pytest
from builders import rslice

from kubectl_dra.errors import DraError
from kubectl_dra.model.objects import snapshot_from_objects


def _slice(*devices):
    return rslice("s", list(devices), "n", pool="p", driver="d.example.com")


GOOD = {"name": "g0", "attributes": {"a": {"string": "x"}}, "capacity": {"m": {"value": "1"}}, "basic": None}


class Sub(dict):
    pass


@pytest.mark.parametrize(
    "device, message",
    [
        ("g1", r"\.spec\.devices\[1\] must be a mapping with a name"),
        ({"name": 7}, r"\.spec\.devices\[1\] must be a mapping with a name"),
        ({"name": "g1", "attributes": []}, r"\.spec\.devices\[1\]\.attributes must be a mapping"),
        ({"name": "g1", "capacity": "1"}, r"\.spec\.devices\[1\]\.capacity must be a mapping"),
        ({"name": "g1", "basic": []}, r"\.spec\.devices\[1\]\.basic must be a mapping"),
        ({"name": "g1", "attributes": {"a": "x"}}, "device g1 attribute a must be a mapping"),
        ({"name": "g1", "capacity": {"m": "1"}}, "device g1 capacity m must be a mapping"),
    ],
)
def test_malformed_devices_are_named(device, message):
    with pytest.raises(DraError, match="ResourceSlice s: " + message):
        snapshot_from_objects([_slice(GOOD, device)], "default")


def test_well_formed_devices_pass_also_as_dict_subclasses():
    odd = Sub(name="g1", attributes=Sub(a=Sub(string="x")), capacity={"m": Sub(value="1")})
    snap = snapshot_from_objects([_slice(GOOD, odd, {"name": "g2"})], "default")
    assert [d["name"] for d in snap.slices[0]["spec"]["devices"]] == ["g0", "g1", "g2"]


def test_an_object_read_twice_counts_once_and_two_versions_of_it_are_refused():
    """`kubectl get pods -n team-x -o yaml` and `kubectl get pods -A -o yaml` in one input hold team-x's pods twice:
    the same uid and resourceVersion, one pod. Two versions of it (dumps taken at different times) are refused."""
    snap_of = snapshot_from_objects

    def p(rv, image="x"):
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "etl", "namespace": "team-x", "uid": "u1", "resourceVersion": rv},
                "spec": {"containers": [{"name": "c", "image": image}]}}  # fmt: skip

    assert len(snap_of([p("7"), p("7")], "team-x").pods) == 1
    with pytest.raises(DraError, match="appears twice in the input, in two different versions"):
        snap_of([p("7"), p("8")], "team-x")
    hand = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "etl"}, "spec": {"containers": []}}
    assert len(snap_of([hand, dict(hand)], "team-x").pods) == 1
    with pytest.raises(DraError):
        snap_of([hand, {**hand, "spec": {"containers": [{"name": "c", "image": "y"}]}}], "team-x")


def _claim_as(api):
    c = {"kind": "ResourceClaim", "metadata": {"name": "c1", "namespace": "ml-team"}, "spec": {}}
    return c if api is None else dict(c, apiVersion=api)


@pytest.mark.parametrize("version", ["v1", "v1beta2", "v1beta1", "v1alpha3"])
def test_the_versions_whose_shape_is_known_are_read(version):
    snap = snapshot_from_objects([_claim_as(f"resource.k8s.io/{version}")], "default")
    assert [c["apiVersion"] for c in snap.claims] == ["resource.k8s.io/v1"]


@pytest.mark.parametrize(
    "api, message",
    [
        ("resource.k8s.io/v9", "apiVersion resource.k8s.io/v9 is not one kubectl-dra reads"),
        ("resource.k8s.io/v2beta1", "apiVersion resource.k8s.io/v2beta1 is not one kubectl-dra reads"),
        ("resource.k8s.io", "apiVersion resource.k8s.io is not one kubectl-dra reads"),
        ("example.com/v1", "apiVersion example.com/v1 is not one kubectl-dra reads"),
        (None, "has no apiVersion"),
    ],
)
def test_an_unknown_version_of_a_dra_kind_is_refused_never_read_as_v1(api, message):
    """resource.k8s.io/v9 was read as v1: a version whose shape is unknown may hold what analysis reads elsewhere,
    and a claim misread (or dropped) makes its device look free. Refused, naming the object and the version."""
    with pytest.raises(DraError, match=f"^ResourceClaim ml-team/c1:? {message}"):
        snapshot_from_objects([_claim_as(api)], "default")


def test_to_v1_refuses_an_unknown_resource_version_too():
    from kubectl_dra.model.normalize import to_v1

    with pytest.raises(DraError, match="unknown apiVersion resource.k8s.io/v9"):
        to_v1(_claim_as("resource.k8s.io/v9"))


def test_an_aggregated_event_is_quoted_in_its_source_s_words():
    """client-go's event correlator prefixes '(combined from similar events): ' once it aggregates an object's similar
    events (the DaemonSet controller's FailedCreate under a quota, retried): the words quoted are the source's."""
    from kubectl_dra.model.normalize import event_words

    said = 'Error creating: pods "p" is forbidden: exceeded quota: no-pods'
    assert event_words("(combined from similar events): " + said) == said
    assert event_words(said) == said
