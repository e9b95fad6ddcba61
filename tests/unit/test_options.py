"""The command line's Options: flags checked once, semantics chosen from the flag or the server's version."""

from __future__ import annotations

import pytest

from kubectl_dra.cli.options import Options, parse_timeout
from kubectl_dra.errors import DraError


def opts(**kw) -> Options:
    return Options.from_click({"request_timeout": "30s", "output": "text", **kw})


def test_timeouts_read_as_kubectl_reads_them():
    assert parse_timeout("30s") == 30 and parse_timeout("1m") == 60 and parse_timeout("500ms") == 0.5
    assert parse_timeout("0") is None
    with pytest.raises(DraError):
        parse_timeout("soon")


def test_bad_gates_and_versions_fail_before_any_gather():
    with pytest.raises(DraError, match="unknown feature gate"):
        opts(feature_gates="NoSuchGate=true")
    with pytest.raises(DraError, match="not supported"):
        opts(kubernetes_version="1.30")


def test_semantics_from_the_flag_the_server_or_the_newest():
    assert opts(kubernetes_version="1.35").semantics("v1.37.2").version == (1, 35)
    s = opts().semantics("v1.36.3-gke.100")
    assert (s.version, s.version_source, s.newer_server) == ((1, 36), "server", None)
    assert opts().semantics("v1.38.0-beta.0").version == (1, 38)
    newer = opts().semantics("v1.39.0")
    assert (newer.version, newer.newer_server) == ((1, 38), "v1.39.0")
    with pytest.raises(DraError):
        opts().semantics("v1.30.1")
    assert opts().semantics(None).version_source == "default"


def test_gates_must_be_possible_on_the_minor():
    # locked gates (LockToDefault) cannot be set otherwise; a removed gate does not exist
    with pytest.raises(DraError, match="DRAPartitionableDevices is locked to true in Kubernetes 1.38"):
        opts(feature_gates="DRAPartitionableDevices=false").semantics("v1.38.0")
    assert not opts(feature_gates="DRAPartitionableDevices=false").semantics("v1.37.2").partitionable
    with pytest.raises(DraError, match="DynamicResourceAllocation does not exist in Kubernetes 1.38"):
        opts(feature_gates="DynamicResourceAllocation=true", kubernetes_version="1.38").semantics(None)
    assert opts(feature_gates="DRAConsumableCapacity=false").semantics("v1.38.0").channel == "stable"
    assert opts(feature_gates="DRAListTypeAttributes=true").semantics("v1.38.0").channel == "incubating"


def test_label_selectors_parse_and_match_as_kubectl_does():
    from kubectl_dra.model.labels import matches, parse_selector

    labels = {"app": "trainer", "tier": "gpu"}
    assert matches(parse_selector("app=trainer,tier in (gpu, cpu)"), labels)
    assert matches(parse_selector("app==trainer,!canary,tier"), labels)
    assert not matches(parse_selector("app!=trainer"), labels)
    assert not matches(parse_selector("tier notin (gpu)"), labels)
    assert not matches(parse_selector("zone"), labels)
    with pytest.raises(DraError, match="unable to parse"):
        parse_selector("app in (")
