package main

// Version shim for Kubernetes 1.36 (k8s.io/dynamic-resource-allocation v0.36.x).

import (
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

const kubernetesMinor = "1.36"
const draModule = "k8s.io/dynamic-resource-allocation@v0.36.6"

// allocatorFeatures mirrors AllocatorFeatures in the 1.36 scheduler plugin
// (kubernetes v1.36.3): note that it does not pass ListTypeAttributes.
func allocatorFeatures(g map[string]bool) structured.Features {
	return structured.Features{
		AdminAccess:            g["DRAAdminAccess"],
		PrioritizedList:        g["DRAPrioritizedList"],
		PartitionableDevices:   g["DRAPartitionableDevices"],
		DeviceTaints:           g["DRADeviceTaints"],
		DeviceBindingAndStatus: g["DRADeviceBindingConditions"] && g["DRAResourceClaimDeviceStatus"],
		ConsumableCapacity:     g["DRAConsumableCapacity"],
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
		DeviceBindingAndStatus: true, ConsumableCapacity: true}},
	{"experimental", structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true,
		DeviceBindingAndStatus: true, ConsumableCapacity: true, ListTypeAttributes: true}},
}

func implementationFor(f structured.Features) string {
	for _, impl := range implementations {
		if impl.supported.Set().IsSuperset(f.Set()) {
			return impl.name
		}
	}
	return "none"
}

// sortsPools: 1.36 incubating and experimental sort pools by driver and pool
// name and slices by name (pools_incubating.go); stable does not.
func sortsPools(impl string) bool { return impl == "incubating" || impl == "experimental" }

// celSeesAllowMultipleAllocations: whether the implementation passes the device's
// allowMultipleAllocations into cel.Device (selectorsMatch); stable does not (CEL then sees false).
func celSeesAllowMultipleAllocations(impl string) bool { return impl != "stable" }
