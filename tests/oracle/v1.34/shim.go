package main

// Version shim for Kubernetes 1.34 (k8s.io/dynamic-resource-allocation v0.34.x).

import (
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

const kubernetesMinor = "1.34"
const draModule = "k8s.io/dynamic-resource-allocation@v0.34.13"

// allocatorFeatures mirrors the 1.34 scheduler plugin (dynamicresources.go,
// "features := structured.Features{...}" in PreFilter), which takes each field
// from the corresponding feature gate.
func allocatorFeatures(g map[string]bool) structured.Features {
	return structured.Features{
		AdminAccess:          g["DRAAdminAccess"],
		PrioritizedList:      g["DRAPrioritizedList"],
		PartitionableDevices: g["DRAPartitionableDevices"],
		DeviceTaints:         g["DRADeviceTaints"],
		DeviceBinding:        g["DRADeviceBindingConditions"],
		DeviceStatus:         g["DRAResourceClaimDeviceStatus"],
		ConsumableCapacity:   g["DRAConsumableCapacity"],
	}
}

// celFeatures mirrors "cel.NewCache(10, cel.Features{...})" in the plugin's New.
func celFeatures(g map[string]bool) cel.Features {
	return cel.Features{EnableConsumableCapacity: g["DRAConsumableCapacity"]}
}

// Supported feature sets copied from structured/internal/{stable,incubating,experimental}.
var implementations = []struct {
	name      string
	supported structured.Features
}{
	{"stable", structured.Features{}},
	{"incubating", structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true}},
	{"experimental", structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true,
		DeviceBinding: true, DeviceStatus: true, ConsumableCapacity: true}},
}

func implementationFor(f structured.Features) string {
	for _, impl := range implementations {
		if impl.supported.Set().IsSuperset(f.Set()) {
			return impl.name
		}
	}
	return "none"
}

// sortsPools: no 1.34 implementation sorts pools (GatherPools iterates a Go map).
func sortsPools(impl string) bool { return false }

// celSeesAllowMultipleAllocations: whether the implementation passes the device's
// allowMultipleAllocations into cel.Device (selectorsMatch); only experimental does in 1.34/1.35,
// elsewhere CEL sees device.allowMultipleAllocations == false.
func celSeesAllowMultipleAllocations(impl string) bool { return impl == "experimental" }
