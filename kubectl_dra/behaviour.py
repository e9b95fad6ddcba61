"""The allocator's version- and channel-specific behaviour as named facts.

Each fact is a property of (Kubernetes minor, allocator channel) with the upstream place it comes from, so that a
reader finds "what does 1.36 incubating do here" in one row of docs/allocator-matrix.md (generated from this file by
`make docs`) and porting a minor means adding a column and the facts that changed. The allocator port reads
`sem.behaviour.<fact>` instead of comparing versions inline. Facts that depend on feature gates too stay on
Semantics (features.py)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Behaviour:
    version: tuple[int, int]
    channel: str  # "stable", "incubating", "experimental"

    @cached_property
    def legacy_allocate_device(self) -> bool:
        """allocateDevice of the 1.34/1.35 rule set, with its bookkeeping leaks (counters of a device rejected later
        stay reserved; undoing a shared device keeps its counters). upstream: allocator_*.go allocateDevice, before
        the 1.36 rewrite."""
        return self.version < (1, 36)

    @cached_property
    def separate_counter_slices(self) -> bool:
        """Shared counters live in slices of their own (the 1.35 layout), per pool; before, in the device's own
        slice. upstream: pools_*.go GatherPools (counter slices), validateConsumption."""
        return self.version >= (1, 35)

    @cached_property
    def counter_slices_reach_every_node(self) -> bool:
        """A slice with sharedCounters belongs to every node's pool (1.35, 1.36); 1.37 selects it by node like any
        slice. upstream: pools_*.go GatherPools."""
        return (1, 35) <= self.version < (1, 37)

    @cached_property
    def pool_wide_counter_sets(self) -> bool:
        """The counter sets of a pool come from all its slices, also those for other nodes. upstream: 1.37
        pools_*.go GatherPools."""
        return self.version >= (1, 37)

    @cached_property
    def skips_unusable_pools(self) -> bool:
        """Incomplete pools are skipped (after a look for a newer generation) and invalid pools are skipped, reported
        as `invalid resource pools were encountered` when nothing fits; before 1.35 an incomplete pool's devices are
        used and reaching an invalid pool is an error. upstream: pools_*.go, allocator_*.go Allocate."""
        return self.version >= (1, 35)

    @cached_property
    def binding_slices_last(self) -> bool:
        """Slices and pools with binding-condition devices go after the others, keeping the informer's map order
        otherwise. upstream: 1.34/1.35 experimental pools_experimental.go."""
        return self.version < (1, 36) and self.channel == "experimental"

    @cached_property
    def shared_device_skips_counters(self) -> bool:
        """A shareable (allowMultipleAllocations) device that already holds a share does not consume its counters
        again. upstream: allocator_*.go allocateDevice (1.35+)."""
        return self.version >= (1, 35)

    @cached_property
    def taint_rule_cel_selectors(self) -> bool:
        """A DeviceTaintRule's selector may name a DeviceClass and CEL selectors (resource.k8s.io/v1alpha3 in 1.34;
        1.35 dropped both fields), and the slice tracker applies the rule only to devices that pass them.
        upstream: resourceslice/tracker/tracker.go applyPatches (v0.34)."""
        return self.version == (1, 34)

    @cached_property
    def nil_taint_selector_matches_all(self) -> bool:
        """A DeviceTaintRule without a deviceSelector taints every device (1.37.1 made it match none, as the API
        documents). upstream: resourceslice/tracker/tracker.go applyPatches, ptr.Deref of the selector (1.34-1.36,
        1.37.0); kubernetes/kubernetes#141648."""
        return self.version < (1, 37)

    @cached_property
    def shared_allocations_consume_counters(self) -> bool:
        """A device allocated only as shares (allowMultipleAllocations results with a shareID) consumes its counters
        in the allocated state. Before 1.36 checkAvailableCounters counts AllocatedDevices only, which holds the
        exclusive allocations. upstream: 1.34/1.35 allocator_experimental.go checkAvailableCounters; 1.36+
        internal.IsDeviceAllocated (AllocatedSharedDeviceIDs too)."""
        return self.version >= (1, 36)

    @cached_property
    def capacity_of_indexed_device(self) -> bool:
        """1.34's capacity check reads the device at the request's device index, not the candidate (an upstream
        index bug, which can also panic: DRA415). upstream: 1.34 allocator_experimental.go allocateDevice."""
        return self.version == (1, 34)

    @cached_property
    def capacity_gate_names_request(self) -> bool:
        """With DRAConsumableCapacity off, a capacity request in a subrequest is reported with the request's name
        (1.34) rather than the subrequest's. upstream: allocator_*.go validateDeviceRequest."""
        return self.version == (1, 34)

    @cached_property
    def distinct_attribute(self) -> str:
        """How distinctAttribute compares: `pointer` (1.34: the very same attribute value of the same device),
        `per-request` (1.35, 1.36), `all` (1.37: every device of the constraint). upstream: constraint.go."""
        if self.version == (1, 34):
            return "pointer"
        return "all" if self.version >= (1, 37) else "per-request"

    @cached_property
    def subrequest_key_lags(self) -> bool:
        """While subrequest i is validated, the selector cache key is still that of subrequest i-1, and allocation
        mode All looks the next device up as one of the first subrequest. upstream: allocator_*.go allocateOne
        (requestKey.subRequestIndex set after validateDeviceRequest), fixed in 1.36."""
        return self.version < (1, 36)

    @cached_property
    def all_mode_static_capacity(self) -> bool:
        """allocationMode All checks the device's static capacity only; shares in use make the allocation fail later.
        upstream: 1.37 allocator_*.go validateDeviceRequest."""
        return self.version >= (1, 37)

    @cached_property
    def capacity_errors_abort(self) -> bool:
        """A capacity request that int64 range arithmetic cannot represent (above MaxInt64, or rounded up past it)
        and a negative consumed capacity abort the allocation instead of skipping the device; every capacity of the
        device is resolved before the soft checks. upstream: 1.37 consumable_capacity.go CmpRequestOverCapacity,
        roundUpRange (errCapacityRequestNotRepresentable, errNegativeCapacity)."""
        return self.version >= (1, 37)

    @cached_property
    def result_copies_tolerations(self) -> bool:
        """Allocation results carry the request's tolerations. upstream: allocator_*.go result building (1.35+)."""
        return self.version >= (1, 35)

    @cached_property
    def cel_error_names_device(self) -> bool:
        """A CEL runtime error names the device (`selector #0 on device d/p/x`). upstream: 1.37 allocator_*.go
        selectorsMatch."""
        return self.version >= (1, 37)

    @cached_property
    def resume_search(self) -> bool:
        """Pools sorted by driver and pool name, slices by name (pools with binding conditions last), and the next
        device slot of a request resumes after the previous pick (combinations instead of permutations).
        upstream: 1.36+ incubating/experimental allocator_*.go allocateOne, pools_*.go; 1.38 stable (1.37
        incubating's code)."""
        return self.version >= (1, 36) and (self.channel != "stable" or self.version >= (1, 38))

    @cached_property
    def old_rules_1_34(self) -> bool:
        """The 1.34 rules that 1.35 stable still has: every device taint must be tolerated whatever its effect, and
        counters are checked per slice. upstream: 1.34 allocator_*.go, 1.35 allocator_stable.go."""
        return self.version == (1, 34) or (self.version == (1, 35) and self.channel == "stable")

    @cached_property
    def cel_sees_multi_allocations(self) -> bool:
        """CEL sees device.allowMultipleAllocations (else it reads false). upstream: the channel's cel device
        conversion (experimental, and incubating from 1.36)."""
        return (
            self.channel == "experimental"
            or (self.channel == "incubating" and self.version >= (1, 36))
            or self.version >= (1, 38)
        )

    @cached_property
    def qualified_capacity_names(self) -> bool:
        """Capacity request names resolve to fully-qualified names (`mem` is `<driver>/mem`), so a request and a
        device capacity spelled differently still meet; a request naming one capacity both ways is an error
        (`capacity %q requested both as %q and as %q`), a negative request is refused before rounding, and errors
        name the qualified capacity. Before, the names had to match exactly. upstream: 1.38
        consumable_capacity.go resolveCapacityRequests, capacityNameForStatus."""
        return self.version >= (1, 38)

    @cached_property
    def attributes_converted_once(self) -> bool:
        """Attribute values are parsed once when the slice arrives: an invalid one (bad semver, empty list, unknown
        type) is kept as unsupported; a match/distinct constraint that meets it, or a list value while
        DRAListTypeAttributes is off, aborts the allocation (`device %s: unsupported attribute value for %s`)
        instead of skipping the device; versions compare as semver (build metadata ignored); of both spellings the
        qualified name wins, of a scalar and a list the scalar. upstream: 1.38 api/conversion.go attrValue,
        allocator_*.go lookupAttribute, constraint.go."""
        return self.version >= (1, 38)

    @cached_property
    def attribute_error_names_claim(self) -> bool:
        """The constraint's `unsupported attribute value` error is prefixed `claim %s, request %s: ` (stable); the
        incubating and experimental channels return it bare. upstream: 1.38 allocator_stable.go allocateDevice vs
        allocator_{incubating,experimental}.go allocateDevice."""
        return self.attributes_converted_once and self.channel == "stable"

    @cached_property
    def active_share_blocks_exclusive(self) -> bool:
        """A device that still carries a share (aggregated capacity, a shared allocation, a share in flight) cannot
        be allocated exclusively, even if it no longer allows multiple allocations. upstream: 1.38 allocator_*.go
        allocateDevice (deviceCapacityInUse)."""
        return self.version >= (1, 38)

    @cached_property
    def invalid_pools_fail_node(self) -> bool:
        """`invalid resource pools were encountered` fails only the node being tried (Unschedulable there, other
        nodes still tried): Allocate wraps it with ErrFailedAllocationOnNode and the plugin's Filter checks for it.
        upstream: 1.35+ allocator_*.go Allocate, dynamicresources.go Filter (errors.Is)."""
        return self.version >= (1, 35)

    @cached_property
    def all_mode_unusable_pool_fails_node(self) -> bool:
        """allocationMode All meeting an incomplete or invalid pool fails the node (Unschedulable there, other nodes
        still tried) instead of aborting the pod's attempt with an error. upstream: 1.38 allocator_*.go
        (internal.ErrFailedAllocationOnNode), kubernetes/kubernetes#141898."""
        return self.version >= (1, 38)

    @cached_property
    def compatibility_groups_code(self) -> bool:
        """The channel checks counter compatibility groups (with DRADeviceCompatibilityGroups, alpha): a device
        drawing from a counter set is allocated only when its groups there share one with every device already on
        the set (allocated, or picked in this search); a device without groups goes only with others without.
        Checked before the counters, not for a further share of a device that holds one. Every 1.37+ channel ignores
        a slice naming groups while the gate is off (its pool is incomplete). upstream: 1.37 allocator_experimental.go,
        1.38 allocator_{incubating,experimental}.go checkAndConsumeCompatibilityGroups; pools_*.go GatherPools."""
        return (self.version == (1, 37) and self.channel == "experimental") or (
            self.version >= (1, 38) and self.channel != "stable"
        )

    @cached_property
    def derived_attributes_code(self) -> bool:
        """The channel evaluates a request's derivedAttributes (with DRADerivedAttributes, alpha): a constraint naming
        one reads the CEL value for the device instead of its attribute; a compile or runtime error, or a value that is
        no attribute, aborts the allocation. Every other 1.37+ channel, and these with the gate off, refuse such a
        request (`cannot handle request with derived attributes, the feature is disabled`). upstream: 1.37
        allocator_experimental.go, 1.38 allocator_{incubating,experimental}.go lookupAttribute, validateDeviceRequest;
        cel/compile.go EvaluateDerivedAttribute."""
        return self.compatibility_groups_code


FACTS: tuple[str, ...] = tuple(k for k, v in vars(Behaviour).items() if isinstance(v, cached_property))


@dataclass(frozen=True)
class Components:
    """What kube-scheduler (outside the allocator) and the kubelet of a minor do, as named facts: the same for every
    allocator channel. Read as `sem.components.<fact>`."""

    version: tuple[int, int]

    @cached_property
    def implicit_extended_resource_names(self) -> bool:
        """Every DeviceClass answers to `deviceclass.resource.kubernetes.io/<name>` as well as to its
        extendedResourceName; of several classes with one name the newest wins. 1.34 knows only the explicit name
        (else the implicit one) and the last class listed wins. upstream: 1.35+ schedutil.IsDRAExtendedResourceName,
        extendedresourcecache updateResourceName2class; 1.34 DeviceClassMapping."""
        return self.version >= (1, 35)

    @cached_property
    def extended_requests_by_lifetime(self) -> bool:
        """The scheduler's extended-resource claim has one request per long-lived container request and one for the
        largest short-lived (init) request that they do not cover, sorted by name; 1.34 has one request per container
        request. upstream: 1.35+ dynamicresources/extendeddynamicresources.go createRequestsAndMappings."""
        return self.version >= (1, 35)

    @cached_property
    def zero_allocatable_goes_to_dra(self) -> bool:
        """A mapped extended resource goes to DRA on a node whose allocatable has 0 of it, not only where the key is
        absent. upstream: 1.35+ noderesources/fit.go shouldDelegateResourceToDRA; 1.34 filterExtendedResources."""
        return self.version >= (1, 35)

    @cached_property
    def prebind_fails_without_mappings(self) -> bool:
        """PreBind fails ('nil or empty request mappings') for a pod with claims of its own on a node whose device
        plugin serves its extended resource (DRA228), on every attempt. upstream: dynamicresources.go PreBind, read
        in v1.35.4, v1.36.3, v1.37.2 and v1.38.0-beta.0, unfixed in all."""
        return (1, 35) <= self.version <= (1, 38)

    @cached_property
    def default_scores_ported(self) -> bool:
        """Which node the default profile's Score plugins pick among those a pod passes (analyze/pod/score.py:
        NodeResourcesFit's LeastAllocated and NodeResourcesBalancedAllocation, where the other plugins cannot tell
        the nodes apart) is modelled. upstream: v1.37.2 noderesources/least_allocated.go, balanced_allocation.go,
        schedule_one.go selectHost; 1.38.0-beta.0 changes both scorers, and the older minors were not read."""
        return self.version == (1, 37)

    @cached_property
    def capitalised_ownership_message(self) -> bool:
        """The Filter's "ResourceClaim X was not created for Pod Y (Pod is not owner)" (with the PodGroup variant);
        before, "pod ... (pod is not owner)". upstream: 1.36+ dynamicresources.go."""
        return self.version >= (1, 36)

    @cached_property
    def gang_in_one_cycle(self) -> bool:
        """A PodGroup with schedulingPolicy.gang is scheduled in one cycle (every member tried against one snapshot,
        all reverted below minCount); 1.35's gangs wait at Permit, holding their devices, for up to 5 minutes.
        upstream: 1.36+ pkg/scheduler/schedule_one_podgroup.go; 1.35 plugins/gangscheduling Permit."""
        return self.version >= (1, 36)

    @cached_property
    def validates_pod_groups(self) -> bool:
        """Before any member is tried, a group whose members' priority is not the PodGroup's, or whose preemption
        policies differ, is rejected at every attempt. upstream: 1.37 schedule_one_podgroup.go validatePodGroup, 1.38
        validatePodGroupHierarchy."""
        return self.version >= (1, 37)

    @cached_property
    def kubelet_reads_skip_node_operations(self) -> bool:
        """The kubelet can skip the driver's NodePrepareResources for results with skipNodeOperations (with
        DRAOptionalNodeOperations on and declared in the Node's status); an older minor's types have no such field.
        upstream: 1.37+ pkg/kubelet/cm/dra/claiminfo.go."""
        return self.version >= (1, 37)

    @cached_property
    def node_allocatable_resources(self) -> bool:
        """With DRANodeAllocatableResources on, the devices' `nodeAllocatableResources` (mapping, overhead) add to a
        pod's requests in the DynamicResources Filter, and every pod's status.nodeAllocatableResourceClaimStatuses to
        its node's: the shape ported (1.36's nodeAllocatableResourceMappings is not). upstream: 1.37+
        dynamicresources/nodeallocatabledynamicresources.go, component-helpers resource addDRANodeAllocatableClaimResources."""
        return self.version >= (1, 37)

    @cached_property
    def node_allocatable_qualified_keys(self) -> bool:
        """A mapping's capacityKey is looked up by qualified name (a key without a domain also matches the driver's),
        and a negative consumed capacity or product makes the Filter err. upstream: 1.38 addDeviceMapping
        (draapi.LookupByQualifiedName)."""
        return self.version >= (1, 38)


COMPONENT_FACTS: tuple[str, ...] = tuple(k for k, v in vars(Components).items() if isinstance(v, cached_property))


def components_markdown(minors: list[tuple[int, int]]) -> str:
    """docs/allocator-matrix.md's second table: one row per Components fact, one column per minor."""
    head = "| fact | " + " | ".join(f"{a}.{b}" for a, b in minors) + " |"
    rule = "|---|" + "---|" * len(minors)
    rows = [
        f"| `{name}` | " + " | ".join("yes" if getattr(Components(v), name) else "-" for v in minors) + " |"
        for name in COMPONENT_FACTS
    ]
    facts = "\n".join(
        f"* `{name}`: " + " ".join((getattr(Components, name).__doc__ or "").split()) for name in COMPONENT_FACTS
    )
    return "\n".join([head, rule, *rows]) + "\n\n" + facts + "\n"


def matrix_markdown(columns: list[tuple[tuple[int, int], str]]) -> str:
    """docs/allocator-matrix.md: one row per fact, one column per (minor, channel)."""
    head = "| fact | " + " | ".join(f"{a}.{b} {c}" for (a, b), c in columns) + " |"
    rule = "|---|" + "---|" * len(columns)
    rows = []
    for name in FACTS:
        vals = []
        for v, c in columns:
            x = getattr(Behaviour(v, c), name)
            vals.append("yes" if x is True else "-" if x is False else f"`{x}`")
        rows.append(f"| `{name}` | " + " | ".join(vals) + " |")
    facts = "\n".join(f"* `{name}`: " + " ".join((getattr(Behaviour, name).__doc__ or "").split()) for name in FACTS)
    return "\n".join([head, rule, *rows]) + "\n\n" + facts + "\n"
