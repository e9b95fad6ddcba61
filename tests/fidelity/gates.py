"""Effective DRA feature-gate defaults per Kubernetes minor, as the upstream code has them.

Extracted from k8s.io/kubernetes pkg/features/kube_features.go (defaultVersionedKubernetesFeatureGates)
of v1.34.4, v1.35.4, v1.36.3, v1.37.2 and v1.38.0-beta.0: for each DRA gate the last entry whose version is
<= the minor. Value: (default, pre-release stage). Only Alpha and Beta gates are ever flipped by the generator;
GA gates stay at their default (locked, except DRADeviceTaints/DRADeviceTaintRules in 1.37 and
DRAConsumableCapacity/DRAFractionalCapacityRange in 1.38).
"""

from __future__ import annotations

A, B, GA = "Alpha", "Beta", "GA"

GATES: dict[str, dict[str, tuple[bool, str]]] = {
    "1.34": {
        "DynamicResourceAllocation": (True, GA),
        "DRAAdminAccess": (True, B),
        "DRAConsumableCapacity": (False, A),
        "DRADeviceBindingConditions": (False, A),
        "DRADeviceTaints": (False, A),
        "DRAExtendedResource": (False, A),
        "DRAPartitionableDevices": (False, A),
        "DRAPrioritizedList": (True, B),
        "DRAResourceClaimDeviceStatus": (True, B),
        "DRASchedulerFilterTimeout": (True, B),
    },
    "1.35": {
        "DynamicResourceAllocation": (True, GA),
        "DRAAdminAccess": (True, B),
        "DRAConsumableCapacity": (False, A),
        "DRADeviceBindingConditions": (False, A),
        "DRADeviceTaintRules": (False, A),
        "DRADeviceTaints": (False, A),
        "DRAExtendedResource": (False, A),
        "DRAPartitionableDevices": (False, A),
        "DRAPrioritizedList": (True, B),
        "DRAResourceClaimDeviceStatus": (True, B),
        "DRASchedulerFilterTimeout": (True, B),
    },
    "1.36": {
        "DynamicResourceAllocation": (True, GA),
        "DRAAdminAccess": (True, GA),
        "DRAConsumableCapacity": (True, B),
        "DRADeviceBindingConditions": (True, B),
        "DRADeviceTaintRules": (False, B),
        "DRADeviceTaints": (True, B),
        "DRAExtendedResource": (True, B),
        "DRAListTypeAttributes": (False, A),
        "DRANodeAllocatableResources": (False, A),
        "DRAPartitionableDevices": (True, B),
        "DRAPrioritizedList": (True, GA),
        "DRAResourceClaimDeviceStatus": (True, B),
        "DRAResourceClaimGranularStatusAuthorization": (True, B),
        "DRAResourcePoolStatus": (False, A),
        "DRASchedulerFilterTimeout": (True, B),
        "DRAWorkloadResourceClaims": (False, A),
    },
    "1.37": {
        "DynamicResourceAllocation": (True, GA),
        "DRAAdminAccess": (True, GA),
        "DRAConsumableCapacity": (True, B),
        "DRADerivedAttributes": (False, A),
        "DRADeviceBindingConditions": (True, B),
        "DRADeviceCompatibilityGroups": (False, A),
        "DRADeviceTaintRules": (True, GA),
        "DRADeviceTaints": (True, GA),
        "DRAExtendedResource": (True, GA),
        "DRAFractionalCapacityRange": (True, B),
        "DRAListTypeAttributes": (False, A),
        "DRANodeAllocatableResources": (False, A),
        "DRAOptionalNodeOperations": (False, A),
        "DRAPartitionableDevices": (True, B),
        "DRAPartitionableDevicesType": (False, A),
        "DRAPrioritizedList": (True, GA),
        "DRAResourceClaimDeviceStatus": (True, GA),
        "DRAResourceClaimGranularStatusAuthorization": (True, B),
        "DRAResourcePoolStatus": (False, A),
        "DRASchedulerFilterTimeout": (True, B),
        "DRAWorkloadResourceClaims": (False, B),
    },
    # v1.38.0-beta.0: DynamicResourceAllocation is removed (no constant, no spec: DRA is always on);
    # DRAConsumableCapacity and DRAFractionalCapacityRange go GA (not locked yet), DRADeviceBindingConditions and
    # DRAPartitionableDevices GA (locked), DRADeviceTaints and DRADeviceTaintRules become locked; no DRA gate is new.
    "1.38": {
        "DRAAdminAccess": (True, GA),
        "DRAConsumableCapacity": (True, GA),
        "DRADerivedAttributes": (False, A),
        "DRADeviceBindingConditions": (True, GA),
        "DRADeviceCompatibilityGroups": (False, A),
        "DRADeviceTaintRules": (True, GA),
        "DRADeviceTaints": (True, GA),
        "DRAExtendedResource": (True, GA),
        "DRAFractionalCapacityRange": (True, GA),
        "DRAListTypeAttributes": (False, A),
        "DRANodeAllocatableResources": (False, A),
        "DRAOptionalNodeOperations": (False, A),
        "DRAPartitionableDevices": (True, GA),
        "DRAPartitionableDevicesType": (False, A),
        "DRAPrioritizedList": (True, GA),
        "DRAResourceClaimDeviceStatus": (True, GA),
        "DRAResourceClaimGranularStatusAuthorization": (True, B),
        "DRAResourcePoolStatus": (False, A),
        "DRASchedulerFilterTimeout": (True, B),
        "DRAWorkloadResourceClaims": (False, B),
    },
}

# Minors with a gate table and an oracle (tests/oracle/v<minor>) that the fidelity tests' version lists
# (test_fidelity.py, test_upstream_table.py) and compare.py's default --versions leave out until the engine
# models them (none now: 1.38 joined with the engine port), to be run explicitly (compare.py --versions X).
PREVIEW: tuple = ()

VERSIONS = tuple(v for v in GATES if v not in PREVIEW)

# Gates that change what the CEL environment or the allocator does; only these are flipped
# (flipping e.g. DRAResourcePoolStatus would not exercise anything the oracle runs).
ALLOCATOR_GATES = (
    "DRAAdminAccess",
    "DRAPrioritizedList",
    "DRAPartitionableDevices",
    "DRADeviceTaints",
    "DRADeviceBindingConditions",
    "DRAResourceClaimDeviceStatus",
    "DRAConsumableCapacity",
    "DRAListTypeAttributes",
    "DRAFractionalCapacityRange",
)


def defaults(version: str) -> dict[str, bool]:
    return {name: default for name, (default, _stage) in GATES[version].items()}


def flippable(version: str) -> list[str]:
    return [g for g in ALLOCATOR_GATES if g in GATES[version] and GATES[version][g][1] != GA]
