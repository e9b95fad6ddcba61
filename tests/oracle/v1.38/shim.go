package main

// Version shim for Kubernetes 1.38 (k8s.io/dynamic-resource-allocation v0.38.0-beta.0).

import (
	"context"
	"errors"
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	draapi "k8s.io/dynamic-resource-allocation/api"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

const kubernetesMinor = "1.38"
const draModule = "k8s.io/dynamic-resource-allocation@v0.38.0-beta.0"

// allocatorFeatures mirrors AllocatorFeatures in the 1.38 scheduler plugin
// (kubernetes v1.38.0-beta.0 pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go:835).
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

// celFeatures mirrors what the 1.38 scheduler passes to cel.NewCache
// (kubernetes v1.38.0-beta.0 pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go:223, New()).
func celFeatures(g map[string]bool) cel.Features {
	return cel.Features{
		EnableConsumableCapacity: g["DRAConsumableCapacity"],
		EnableListTypeAttributes: g["DRAListTypeAttributes"],
	}
}

// implementations mirrors SupportedFeatures in structured/internal/{stable,incubating,experimental}
// of v0.38.0-beta.0: stable got 1.37's incubating set, incubating got 1.37's experimental set
// (incubating and experimental are identical code in v0.38.0-beta.0).
var implementations = []struct {
	name      string
	supported structured.Features
}{
	{"stable", structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true,
		DeviceBindingAndStatus: true, ConsumableCapacity: true, FractionalCapacityRange: true}},
	{"incubating", structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true,
		DeviceBindingAndStatus: true, ConsumableCapacity: true, FractionalCapacityRange: true, ListTypeAttributes: true,
		OptionalNodeOperations: true, DerivedAttributes: true, CompatibilityGroups: true}},
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

// sortsPools: in v0.38.0-beta.0 all three implementations sort pools and slices
// (pools_{stable,incubating,experimental}.go:206,212).
func sortsPools(impl string) bool { return impl != "none" }

// celSeesAllowMultipleAllocations: whether the implementation passes the device's
// allowMultipleAllocations into cel.Device (selectorsMatch); in v0.38.0-beta.0 all three do
// (allocator_stable.go:1357, allocator_{incubating,experimental}.go:1617).
func celSeesAllowMultipleAllocations(impl string) bool { return true }

// Hooks main.go calls (see its package comment).

// newSharedDeviceIDSet / insertSharedDeviceID: since v0.38 AllocatedState.AllocatedSharedDeviceIDs is a
// set of DeviceID (schedulerapi/types.go); the plugin collapses the share IDs of a device into its ID
// (pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go).
func newSharedDeviceIDSet() sets.Set[structured.DeviceID] { return sets.New[structured.DeviceID]() }

func insertSharedDeviceID(s sets.Set[structured.DeviceID], id structured.DeviceID, _ *types.UID) {
	s.Insert(id)
}

// convertSlice converts a v1 slice as the 1.38 scheduler's ResourceSlice informer does
// (dynamic-resource-allocation/api/informers.go: Convert_v1_ResourceSlice_To_api_ResourceSlice with a
// nil scope): attributes and capacities nested by domain, "<driver>/x" and "x" one key (the
// qualified entry wins), attribute values typed (an invalid semver or an empty list becomes nil).
// The informer logs a conversion error and goes on with what was converted; it cannot fail for a
// decodable slice, but the error is returned here so that a future one is not silent.
func convertSlice(in *resourceapi.ResourceSlice) (*draapi.ResourceSlice, error) {
	out := &draapi.ResourceSlice{}
	if err := draapi.Convert_v1_ResourceSlice_To_api_ResourceSlice(in, out, nil); err != nil {
		return out, fmt.Errorf("convert ResourceSlice %s: %w", in.Name, err)
	}
	return out, nil
}

// newAllocator: since v0.38 NewAllocator takes the converted slices (structured/allocator.go).
func newAllocator(ctx context.Context, features structured.Features, state structured.AllocatedState,
	classes structured.DeviceClassLister, slices []*resourceapi.ResourceSlice, cache *cel.Cache) (structured.Allocator, error) {
	converted := make([]*draapi.ResourceSlice, len(slices))
	for i, in := range slices {
		out, err := convertSlice(in)
		if err != nil {
			return nil, err
		}
		converted[i] = out
	}
	return structured.NewAllocator(ctx, features, state, classes, converted, cache)
}

// celConverted: the conversion of the slice celDeviceFor was last called with. evalCEL asks for the
// devices of one slice in a row, so each slice is converted once per selector, not once per device.
// Holding the v1 pointer keeps it from being reused for another slice while it is the key.
var celConverted struct {
	in  *resourceapi.ResourceSlice
	out *draapi.ResourceSlice
}

// celDeviceFor: the cel.Device that selectorsMatch builds in v0.38 (allocator_stable.go:1357,
// allocator_{incubating,experimental}.go:1617): the converted maps and the slice's
// LookupUniqueString (CEL resolves attribute names through it; nil panics).
func celDeviceFor(slice *resourceapi.ResourceSlice, index int, passMulti bool) cel.Device {
	if celConverted.in != slice {
		out, err := convertSlice(slice)
		if err != nil {
			panic(err) // reported as this CEL entry's error (deviceMatches recovers)
		}
		celConverted.in, celConverted.out = slice, out
	}
	d := &celConverted.out.Spec.Devices[index]
	input := cel.Device{Driver: slice.Spec.Driver, Attributes: d.Attributes, Capacity: d.Capacity,
		LookupUniqueString: celConverted.out.LookupUniqueString}
	if passMulti {
		input.AllowMultipleAllocations = d.AllowMultipleAllocations
	}
	return input
}

// failedOnNode: the 1.38 Filter (dynamicresources.go, case errors.Is(err,
// structured.ErrFailedAllocationOnNode)) makes such an error Unschedulable on the node, not an Error.
// v0.38 wraps "invalid resource pools were encountered" (as since v0.35) and, new, allocationMode All
// over an incomplete or invalid pool ("asks for all devices, but resource pool %s is currently being
// updated" / "... invalid", #141898) with it.
func failedOnNode(err error) bool { return errors.Is(err, structured.ErrFailedAllocationOnNode) }

func init() {
	// The conversion reports an unparsable semver attribute through utilruntime.HandleErrorWithLogger
	// (api/conversion.go attrValue, "parsing semver"): an ERROR line on stderr (klog's stderr
	// threshold ignores main's io.Discard) and a 1 ms sleep per error (the handler's rate limiter).
	// The scheduler pays that once per informer event, not in Filter; the oracle converts on every
	// run, so both handlers are dropped. The attribute still becomes nil, as upstream.
	utilruntime.ErrorHandlers = nil
}
