package main

// Version shim for Kubernetes 1.35 (k8s.io/dynamic-resource-allocation v0.35.x).

import (
	"context"
	"errors"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
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

// Hooks main.go calls (see its package comment); up to 1.37 they are the plain calls.

// newSharedDeviceIDSet / insertSharedDeviceID: AllocatedState.AllocatedSharedDeviceIDs is a set of
// SharedDeviceID (device ID and share ID) up to v0.37.
func newSharedDeviceIDSet() sets.Set[structured.SharedDeviceID] {
	return sets.New[structured.SharedDeviceID]()
}

func insertSharedDeviceID(s sets.Set[structured.SharedDeviceID], id structured.DeviceID, shareID *types.UID) {
	s.Insert(structured.MakeSharedDeviceID(id, shareID))
}

// newAllocator: up to v0.37 NewAllocator takes the v1 slices as they are (it converts them itself).
func newAllocator(ctx context.Context, features structured.Features, state structured.AllocatedState,
	classes structured.DeviceClassLister, slices []*resourceapi.ResourceSlice, cache *cel.Cache) (structured.Allocator, error) {
	return structured.NewAllocator(ctx, features, state, classes, slices, cache)
}

// celDeviceFor: the cel.Device that selectorsMatch builds for device index of slice (the v1 maps;
// allowMultipleAllocations only where the implementation passes it, else CEL sees false).
func celDeviceFor(slice *resourceapi.ResourceSlice, index int, passMulti bool) cel.Device {
	d := &slice.Spec.Devices[index]
	input := cel.Device{Driver: slice.Spec.Driver, Attributes: d.Attributes, Capacity: d.Capacity}
	if passMulti {
		input.AllowMultipleAllocations = d.AllowMultipleAllocations
	}
	return input
}

// failedOnNode: whether an Allocate error is a per-node failure (main.go outcome "failed-on-node").
// structured.ErrFailedAllocationOnNode exists since v0.35; all three channels wrap "invalid resource pools
// were encountered" with it, and the 1.35 Filter (dynamicresources.go, case errors.Is(err,
// structured.ErrFailedAllocationOnNode)) makes that Unschedulable on the node, not an Error (the engine:
// Behaviour.invalid_pools_fail_node).
func failedOnNode(err error) bool { return errors.Is(err, structured.ErrFailedAllocationOnNode) }
