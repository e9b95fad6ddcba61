"""Effective DRA feature-gate defaults per Kubernetes minor, as the upstream code has them.

Extracted from k8s.io/kubernetes pkg/features/kube_features.go (defaultVersionedKubernetesFeatureGates)
of v1.34.4, v1.35.4, v1.36.3 and v1.37.2: for each DRA gate the last entry whose version is <= the minor.
Value: (default, pre-release stage). Only Alpha and Beta gates are ever flipped by the generator;
GA gates stay at their (locked) default.
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
}

VERSIONS = tuple(GATES)

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
