"""Kubernetes versions kubectl-dra understands and their DRA feature-gate defaults (dra-facts.md §0)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Mapping

SUPPORTED_VERSIONS: tuple[tuple[int, int], ...] = ((1, 34), (1, 35), (1, 36), (1, 37), (1, 38))
NEWEST = SUPPORTED_VERSIONS[-1]
# What an analysis assumes with no --kubernetes-version and no server: the newest released minor. 1.38 is ported from
# its pre-release (v0.38.0-beta.0; docs/fidelity.md) and used for a 1.38 server or on request until it ships.
DEFAULT_VERSION = (1, 37)

# Default value of every DRA gate per minor. GA gates are listed as True (locked on).
_DEFAULTS: dict[tuple[int, int], dict[str, bool]] = {
    (1, 34): {
        "DynamicResourceAllocation": True,
        "DRAPrioritizedList": True,
        "DRAAdminAccess": True,
        "DRAResourceClaimDeviceStatus": True,
        "DRASchedulerFilterTimeout": True,
        "DRAPartitionableDevices": False,
        "DRADeviceTaints": False,
        "DRADeviceTaintRules": False,
        "DRAConsumableCapacity": False,
        "DRADeviceBindingConditions": False,
        "DRAExtendedResource": False,
        "DRAListTypeAttributes": False,
    },
}
_DEFAULTS[(1, 35)] = dict(_DEFAULTS[(1, 34)])
_DEFAULTS[(1, 36)] = dict(
    _DEFAULTS[(1, 35)],
    DRAPartitionableDevices=True,
    DRADeviceTaints=True,
    DRAConsumableCapacity=True,
    DRADeviceBindingConditions=True,
    DRAExtendedResource=True,
    DRAWorkloadResourceClaims=False,  # alpha in 1.36, beta and still off in 1.37 (PodGroup claims)
    DRANodeAllocatableResources=False,  # alpha and off in 1.36-1.38 (analyze/pod/nodealloc.py: modelled in 1.37+)
)
_DEFAULTS[(1, 37)] = dict(_DEFAULTS[(1, 36)], DRADeviceTaintRules=True)

# Alpha gates of the 1.37 allocator (off by default).
for _g in ("DRAOptionalNodeOperations", "DRADerivedAttributes", "DRADeviceCompatibilityGroups"):
    _DEFAULTS[(1, 37)][_g] = False
# Beta, on by default in 1.37: request-policy ranges round in milli units (allocator.consumed_capacity).
_DEFAULTS[(1, 37)]["DRAFractionalCapacityRange"] = True

# 1.38 (k8s.io/kubernetes v1.38.0-beta.0 pkg/features/kube_features.go): DynamicResourceAllocation is removed (DRA
# is always on); DRADeviceBindingConditions and DRAPartitionableDevices go GA (locked, with DRADeviceTaints and
# DRADeviceTaintRules), DRAConsumableCapacity and DRAFractionalCapacityRange go GA (not locked yet). The defaults
# are 1.37's.
_DEFAULTS[(1, 38)] = {k: v for k, v in _DEFAULTS[(1, 37)].items() if k != "DynamicResourceAllocation"}

KNOWN_GATES = frozenset(g for gates in _DEFAULTS.values() for g in gates)

# Gates locked to their default (LockToDefault in kube_features.go's versioned specs): a component started with
# another value refuses to run, so no cluster has one.
_LOCKED: dict[tuple[int, int], frozenset] = {
    (1, 34): frozenset(),
    (1, 35): frozenset({"DynamicResourceAllocation"}),
    (1, 36): frozenset({"DynamicResourceAllocation", "DRAAdminAccess"}),
    (1, 37): frozenset(
        {"DynamicResourceAllocation", "DRAAdminAccess", "DRAExtendedResource", "DRAPrioritizedList"}
        | {"DRAResourceClaimDeviceStatus"}
    ),
    (1, 38): frozenset(
        {"DRAAdminAccess", "DRAExtendedResource", "DRAPrioritizedList", "DRAResourceClaimDeviceStatus"}
        | {"DRADeviceBindingConditions", "DRAPartitionableDevices", "DRADeviceTaints", "DRADeviceTaintRules"}
    ),
}


def check_gates(version: tuple[int, int], overrides: Mapping[str, bool]) -> None:
    """--feature-gates as a cluster of that minor could run them: a gate of the minor, not set off its locked
    default. Raises FeatureGateError."""
    for name, value in sorted(overrides.items()):
        if name not in _DEFAULTS[version]:
            raise FeatureGateError(f"feature gate {name} does not exist in Kubernetes {version[0]}.{version[1]}")
        if name in _LOCKED[version] and value != _DEFAULTS[version][name]:
            raise FeatureGateError(
                f"feature gate {name} is locked to {str(_DEFAULTS[version][name]).lower()} in Kubernetes "
                f"{version[0]}.{version[1]}: kube-scheduler does not start with it set otherwise"
            )


# The allocator implementations ("channels") of k8s.io/dynamic-resource-allocation/structured per minor and the
# allocator features each supports. NewAllocator picks the first whose set covers every enabled feature.
_BASE = frozenset({"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints"})
# 1.37 incubating's set, which 1.38 stable has; and every feature of the structured.Features of 1.37 and 1.38.
_BASE_137 = _BASE | {"DeviceBindingAndStatus", "ConsumableCapacity", "FractionalCapacityRange"}
_ALL_137 = _BASE_137 | {"ListTypeAttributes", "OptionalNodeOperations", "DerivedAttributes", "CompatibilityGroups"}
_CHANNELS = {
    (1, 34): (
        ("stable", frozenset()),
        ("incubating", _BASE),
        ("experimental", _BASE | {"DeviceBinding", "DeviceStatus", "ConsumableCapacity"}),
    ),
    (1, 35): (
        ("stable", frozenset()),
        ("incubating", _BASE),
        ("experimental", _BASE | {"DeviceBindingAndStatus", "ConsumableCapacity"}),
    ),
    (1, 36): (
        ("stable", _BASE),
        ("incubating", _BASE | {"DeviceBindingAndStatus", "ConsumableCapacity"}),
        ("experimental", _BASE | {"DeviceBindingAndStatus", "ConsumableCapacity", "ListTypeAttributes"}),
    ),
    (1, 37): (("stable", _BASE), ("incubating", _BASE_137), ("experimental", _ALL_137)),
    # v0.38 moved every feature up one channel: stable has 1.37 incubating's set (and, with the cross-cutting 1.38
    # changes, its code), incubating and experimental all eleven (the same code). structured/allocator_*.go
    # SupportedFeatures.
    (1, 38): (("stable", _BASE_137), ("incubating", _ALL_137), ("experimental", _ALL_137)),
}


class FeatureGateError(ValueError):
    """A --feature-gates or --kubernetes-version value that cannot be used."""


def version_tuple(text: str) -> tuple[int, int] | None:
    """'1.36', 'v1.36.2', '1.36.2-gke.1' or '1.36+' -> (1, 36); None if it is not a version."""
    parts = str(text).strip().lstrip("v").split(".")
    try:
        return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()))
    except (ValueError, IndexError):
        return None


def parse_version(text: str) -> tuple[int, int]:
    """'1.36', 'v1.36.2' or '1.36.2-gke.1' -> (1, 36); the value must be a supported minor."""
    v = version_tuple(text)
    if v is None:
        raise FeatureGateError(
            f"invalid Kubernetes version {text!r}: expected " + ", ".join(f"{a}.{b}" for a, b in SUPPORTED_VERSIONS)
        )
    major, minor = v
    if (major, minor) not in SUPPORTED_VERSIONS:
        raise FeatureGateError(
            f"Kubernetes version {major}.{minor} is not supported: expected one of "
            + ", ".join(f"{a}.{b}" for a, b in SUPPORTED_VERSIONS)
        )
    return major, minor


def parse_gates(text: str | None) -> dict[str, bool]:
    """'A=true,B=false' -> {'A': True, 'B': False}; unknown names are an error."""
    out: dict[str, bool] = {}
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or value.strip().lower() not in ("true", "false"):
            raise FeatureGateError(f"invalid feature gate {item!r}: expected Name=true or Name=false")
        if name not in KNOWN_GATES:
            raise FeatureGateError(f"unknown feature gate {name!r}; known: {', '.join(sorted(KNOWN_GATES))}")
        out[name] = value.strip().lower() == "true"
    return out


@dataclass(frozen=True)
class Semantics:
    """The Kubernetes version and feature gates an analysis assumes. Immutable; the derived properties
    are cached (the allocator's search reads them millions of times)."""

    version: tuple[int, int]
    gates: Mapping[str, bool]
    overridden: frozenset[str] = frozenset()
    version_source: str = "default"  # "flag", "server" or "default"
    newer_server: str | None = None  # the server's version when it is newer than the newest supported minor

    @classmethod
    def for_version(
        cls, version=DEFAULT_VERSION, overrides=None, version_source="default", newer_server: str | None = None
    ) -> "Semantics":
        gates = dict(_DEFAULTS[version])
        gates.update(overrides or {})
        return cls(version, MappingProxyType(gates), frozenset(overrides or ()), version_source, newer_server)

    def gate(self, name: str) -> bool:
        return bool(self.gates.get(name, False))

    @cached_property
    def version_str(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"

    # Allocator feature set, as kube-scheduler builds it from the gates (dra-facts §2.1).
    @cached_property
    def admin_access(self) -> bool:
        return self.gate("DRAAdminAccess")

    @cached_property
    def prioritized_list(self) -> bool:
        return self.gate("DRAPrioritizedList")

    @cached_property
    def partitionable(self) -> bool:
        return self.gate("DRAPartitionableDevices")

    @cached_property
    def device_taints(self) -> bool:
        return self.gate("DRADeviceTaints")

    @cached_property
    def taint_rules(self) -> bool:
        """The scheduler applies DeviceTaintRules: with DRADeviceTaints, and from 1.35 also DRADeviceTaintRules (1.34
        has no such gate: its scheduler watches the rules whenever DRADeviceTaints is on)."""
        if self.version == (1, 34):
            return self.gate("DRADeviceTaints")
        return self.gate("DRADeviceTaints") and self.gate("DRADeviceTaintRules")

    @cached_property
    def consumable_capacity(self) -> bool:
        return self.gate("DRAConsumableCapacity")

    @cached_property
    def binding_conditions(self) -> bool:
        return self.gate("DRADeviceBindingConditions") and self.gate("DRAResourceClaimDeviceStatus")

    @cached_property
    def list_attributes(self) -> bool:
        return self.gate("DRAListTypeAttributes")

    # -- which allocator implementation kube-scheduler runs, and what its code does -----------------
    @cached_property
    def allocator_features(self) -> frozenset:
        g = self.gate
        f = {
            "AdminAccess": g("DRAAdminAccess"),
            "PrioritizedList": g("DRAPrioritizedList"),
            "PartitionableDevices": g("DRAPartitionableDevices"),
            "DeviceTaints": g("DRADeviceTaints"),
            "ConsumableCapacity": g("DRAConsumableCapacity"),
        }
        if self.version == (1, 34):
            f["DeviceBinding"] = g("DRADeviceBindingConditions")
            f["DeviceStatus"] = g("DRAResourceClaimDeviceStatus")
        else:
            f["DeviceBindingAndStatus"] = g("DRADeviceBindingConditions") and g("DRAResourceClaimDeviceStatus")
        # 1.36's plugin does not pass ListTypeAttributes to the allocator (only to its CEL
        # environment): the gate alone never moves 1.36 off the "stable" implementation.
        if self.version >= (1, 37):
            f["ListTypeAttributes"] = g("DRAListTypeAttributes")
            f.update(
                FractionalCapacityRange=g("DRAFractionalCapacityRange"),
                OptionalNodeOperations=g("DRAOptionalNodeOperations"),
                DerivedAttributes=g("DRADerivedAttributes"),
                CompatibilityGroups=g("DRADeviceCompatibilityGroups"),
            )
        return frozenset(k for k, v in f.items() if v)

    @cached_property
    def channel(self) -> str:
        enabled = self.allocator_features
        for name, supported in _CHANNELS[self.version]:
            if enabled <= supported:
                return name
        return _CHANNELS[self.version][-1][0]

    def _channel_supports(self, feature: str) -> bool:
        return feature in dict(_CHANNELS[self.version])[self.channel]

    @cached_property
    def code_consumable_capacity(self) -> bool:
        """The channel has the consumable-capacity code: distinctAttribute constraints work, and capacity
        requests are refused while the gate is off. Without it both are unknown to the allocator."""
        return self._channel_supports("ConsumableCapacity")

    @cached_property
    def optional_node_operations_code(self) -> bool:
        """The channel has 1.37 experimental's optional-node-operations check (allocateDevice): a device of a slice
        with spec.skipNodeOperations is skipped unless DRAOptionalNodeOperations is on and the node declares the
        feature in status.declaredFeatures. Channels without the code never read the field."""
        return self.version >= (1, 37) and self._channel_supports("OptionalNodeOperations")

    @cached_property
    def compatibility_groups(self) -> bool:
        """The allocator checks counter compatibility groups (allocator/compat.py): the gate and a channel with the
        code (Behaviour.compatibility_groups_code; the gate selects one)."""
        return self.gate("DRADeviceCompatibilityGroups") and self.behaviour.compatibility_groups_code

    @cached_property
    def derived_attributes(self) -> bool:
        """The allocator evaluates derived attributes (allocator/derived.py); 1.37+ without it refuses requests that
        define them."""
        return self.gate("DRADerivedAttributes") and self.behaviour.derived_attributes_code

    @cached_property
    def behaviour(self):
        """The allocator's named facts for this minor and channel (behaviour.py)."""
        from kubectl_dra.behaviour import Behaviour

        return Behaviour(self.version, self.channel)

    @cached_property
    def components(self):
        """kube-scheduler's (outside the allocator) and the kubelet's named facts for this minor (behaviour.py)."""
        from kubectl_dra.behaviour import Components

        return Components(tuple(self.version[:2]))

    def to_dict(self) -> dict:
        """The semantics as every report's document carries them: one dict per Semantics, shared by the reports of
        an answer (5,000 pods' reports hold one), so a caller reads it and never changes it."""
        return self._as_dict

    @cached_property
    def _as_dict(self) -> dict:
        return {
            "kubernetesVersion": self.version_str,
            "allocator": self.channel,
            "versionSource": self.version_source,
            "featureGates": {k: self.gates[k] for k in sorted(self.gates)},
            "overriddenGates": sorted(self.overridden),
            "serverVersion": self.newer_server,
        }
