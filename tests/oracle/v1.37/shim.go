package main

// Version shim for Kubernetes 1.37 (k8s.io/dynamic-resource-allocation v0.37.x).

import (
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

const kubernetesMinor = "1.37"
const draModule = "k8s.io/dynamic-resource-allocation@v0.37.2"

// allocatorFeatures mirrors AllocatorFeatures in the 1.37 scheduler plugin (kubernetes v1.37.2).
func allocatorFeatures(g map[string]bool) structured.Features {
	return structured.Features{
		AdminAccess:             g["DRAAdminAccess"],
		PrioritizedList:         g["DRAPrioritizedList"],
		PartitionableDevices:    g["DRAPartitionableDevices"],
		DeviceTaints:            g["DRADeviceTaints"],
		DeviceBindingAndStatus:  g["DRADeviceBindingConditions"] && g["DRAResourceClaimDeviceStatus"],
		ConsumableCapacity:      g["DRAConsumableCapacity"],
		FractionalCapacityRange: g["DRAFractionalCapacityRange"],
		ListTypeAttributes:      g["DRAListTypeAttributes"],
		OptionalNodeOperations:  g["DRAOptionalNodeOperations"],
		DerivedAttributes:       g["DRADerivedAttributes"],
		CompatibilityGroups:     g["DRADeviceCompatibilityGroups"],
	}
}

func celFeatures(g map[string]bool) cel.Features {
	return cel.Features{
		EnableConsumableCapacity: g["DRAConsumableCapacity"],
		EnableListTypeAttributes: g["DRAListTypeAttributes"],
	}
}

var implementations = []struct {
	name      string
	supported structured.Features
}{
	{"stable", structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true}},
	{"incubating", structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true,
		DeviceBindingAndStatus: true, ConsumableCapacity: true, FractionalCapacityRange: true}},
	{"experimental", structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true,
		DeviceBindingAndStatus: true, ConsumableCapacity: true, FractionalCapacityRange: true, ListTypeAttributes: true,
		OptionalNodeOperations: true, DerivedAttributes: true, CompatibilityGroups: true}},
}

func implementationFor(f structured.Features) string {
	for _, impl := range implementations {
		if impl.supported.Set().IsSuperset(f.Set()) {
			return impl.name
		}
	}
	return "none"
}

// sortsPools: incubating and experimental sort pools and slices; stable does not.
func sortsPools(impl string) bool { return impl == "incubating" || impl == "experimental" }

// celSeesAllowMultipleAllocations: whether the implementation passes the device's
// allowMultipleAllocations into cel.Device (selectorsMatch); stable does not (CEL then sees false).
func celSeesAllowMultipleAllocations(impl string) bool { return impl != "stable" }
