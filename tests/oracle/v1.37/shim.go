package main

// Version shim for Kubernetes 1.37 (k8s.io/dynamic-resource-allocation v0.37.x).

import (
	"context"
	"errors"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
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
// were encountered" with it, and the 1.37 Filter (dynamicresources.go, case errors.Is(err,
// structured.ErrFailedAllocationOnNode)) makes that Unschedulable on the node, not an Error (the engine:
// Behaviour.invalid_pools_fail_node).
func failedOnNode(err error) bool { return errors.Is(err, structured.ErrFailedAllocationOnNode) }
