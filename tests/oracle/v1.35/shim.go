package main

// Version shim for Kubernetes 1.35 (k8s.io/dynamic-resource-allocation v0.35.x).

import (
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

const kubernetesMinor = "1.35"
const draModule = "k8s.io/dynamic-resource-allocation@v0.35.10"

// allocatorFeatures mirrors AllocatorFeatures in the 1.35 scheduler plugin.
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
	return cel.Features{EnableConsumableCapacity: g["DRAConsumableCapacity"]}
}

var implementations = []struct {
	name      string
	supported structured.Features
}{
	{"stable", structured.Features{}},
	{"incubating", structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true}},
	{"experimental", structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true,
		DeviceBindingAndStatus: true, ConsumableCapacity: true}},
}

func implementationFor(f structured.Features) string {
	for _, impl := range implementations {
		if impl.supported.Set().IsSuperset(f.Set()) {
			return impl.name
		}
	}
	return "none"
}

// sortsPools: no 1.35 implementation sorts pools (GatherPools iterates a Go map).
func sortsPools(impl string) bool { return false }

// celSeesAllowMultipleAllocations: whether the implementation passes the device's
// allowMultipleAllocations into cel.Device (selectorsMatch); only experimental does in 1.34/1.35,
// elsewhere CEL sees device.allowMultipleAllocations == false.
func celSeesAllowMultipleAllocations(impl string) bool { return impl == "experimental" }
