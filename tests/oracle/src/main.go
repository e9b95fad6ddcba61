// Command oracle evaluates a DRA scenario with the upstream Kubernetes code
// (k8s.io/dynamic-resource-allocation of one minor release) and prints what
// kube-scheduler's DynamicResources plugin would compute for one node:
//
//   - per device and per CEL selector: the result of cel.CompilationResult.DeviceMatches
//     (compiled through cel.Cache.GetOrCompile, i.e. the stored-expressions environment,
//     exactly as the allocator does), and
//   - the outcome of structured.NewAllocator(...).Allocate(ctx, node, claims).
//
// Input: a stream of JSON scenario objects on stdin (one per line or simply
// concatenated). Output: one JSON object per line on stdout, in input order.
// The source is shared by all minors (tests/oracle/src/main.go is symlinked
// into tests/oracle/v1.3x/); version differences live in shim.go of each minor,
// which provides these hooks besides its feature and channel tables:
//
//   - newSharedDeviceIDSet / insertSharedDeviceID: AllocatedState.AllocatedSharedDeviceIDs
//     (a set of SharedDeviceID up to 1.37, of DeviceID since 1.38);
//   - newAllocator: structured.NewAllocator from the v1 slices (1.38 takes the
//     converted draapi slices the scheduler's informer hands out);
//   - celDeviceFor: the cel.Device that the allocator's selectorsMatch builds;
//   - failedOnNode: whether an Allocate error is a per-node failure (outcome "failed-on-node").
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
)

// scenario is the input document. Kubernetes objects are decoded strictly:
// a field that the pinned k8s.io/api of this minor does not know is reported
// as an input error instead of being silently dropped.
type scenario struct {
	ID              string
	Version         string
	FeatureGates    map[string]bool
	Node            *v1.Node
	DeviceClasses   []*resourceapi.DeviceClass
	Claims          []*resourceapi.ResourceClaim
	AllocatedClaims []*resourceapi.ResourceClaim
	Slices          []*resourceapi.ResourceSlice
	Runs            int
	// Trace: record the first run's per-device decisions (trace.go) in the output.
	Trace bool
}

type celEntry struct {
	Source   string  `json:"source"`
	Object   string  `json:"object"`
	Request  string  `json:"request"`
	Class    string  `json:"class"`
	Selector int     `json:"selector"`
	Device   string  `json:"device"`
	Result   *bool   `json:"result"`
	Error    *string `json:"error"`
	// OtherErrors: different texts of the same error seen when the evaluation is repeated
	// (cel.DeviceMatches ranges over the attribute map, so which bad attribute it names is random).
	OtherErrors []string `json:"otherErrors,omitempty"`
}

type resultEntry struct {
	Request          string            `json:"request"`
	Driver           string            `json:"driver"`
	Pool             string            `json:"pool"`
	Device           string            `json:"device"`
	AdminAccess      *bool             `json:"adminAccess,omitempty"`
	ConsumedCapacity map[string]string `json:"consumedCapacity,omitempty"`
}

type claimAllocation struct {
	Claim        string           `json:"claim"`
	Results      []resultEntry    `json:"results"`
	NodeSelector *v1.NodeSelector `json:"nodeSelector"`
}

// allocation.Outcome is one of
//
//   - "allocated": Allocate returned results (the Filter passes the node);
//   - "unallocatable": Allocate returned nil, nil (Filter: Unschedulable on this node, "cannot
//     allocate all claims");
//   - "failed-on-node": Allocate returned an error that wraps structured.ErrFailedAllocationOnNode
//     (shim failedOnNode). The scheduler's Filter makes it Unschedulable on this node with the
//     error's text as the reason ("Not a fatal error, allocation on other nodes may proceed"), not
//     an Error that aborts the pod's scheduling attempt; Error holds the text;
//   - "error": any other Allocate (or NewAllocator) error: Filter returns Error, the attempt ends;
//   - "panic" / "timeout": upstream crashed / exceeded the filter timeout (set in runAllocator/process).
type allocation struct {
	Outcome string            `json:"outcome"`
	Error   *string           `json:"error"`
	Claims  []claimAllocation `json:"claims"`
}

type output struct {
	ID             string  `json:"id,omitempty"`
	Version        string  `json:"version"`
	Module         string  `json:"module"`
	Implementation string  `json:"implementation"`
	Deterministic  bool    `json:"deterministic"`
	Runs           int     `json:"runs"`
	InputError     *string `json:"inputError,omitempty"`
	// Whether the implementation hands device.allowMultipleAllocations to CEL (else CEL sees false).
	CELSeesAllowMultipleAllocations bool `json:"celSeesAllowMultipleAllocations"`
	// CEL results: every device of every slice x every selector of every class
	// referenced by a request or subrequest, then every request/subrequest selector.
	CEL []celEntry `json:"cel"`
	// Allocation of the first run.
	Allocation *allocation `json:"allocation"`
	// Alternatives: all distinct allocations seen over all runs (only more than one
	// when the implementation iterates pools in Go map order).
	Alternatives []*allocation `json:"alternatives"`
	ElapsedMS    int64         `json:"elapsedMs"`
	// Trace: the first run's per-device decisions, in the order upstream made them (scenario "trace": true).
	Trace          []traceEntry `json:"trace,omitempty"`
	TraceTruncated bool         `json:"traceTruncated,omitempty"`
	// Deepest: where the first run's search ran out of candidates first (trace.go deepestRecord), when it found no
	// allocation; DeepestAlternatives: every distinct one over all runs (pool order is Go map order in some
	// implementations), with the scenario's "trace".
	Deepest             *deepestRecord   `json:"deepest,omitempty"`
	DeepestAlternatives []*deepestRecord `json:"deepestAlternatives,omitempty"`
}

func strictDecode(raw json.RawMessage, into any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

var topLevelKeys = sets.New("id", "version", "featureGates", "node", "deviceClasses", "claims",
	"allocatedClaims", "slices", "runs", "trace", "features", "seed", "meta")

func parseScenario(raw json.RawMessage) (*scenario, string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, "", err
	}
	s := &scenario{}
	if v, ok := top["id"]; ok {
		_ = json.Unmarshal(v, &s.ID)
	}
	for k := range top {
		if !topLevelKeys.Has(k) {
			return nil, s.ID, fmt.Errorf("unknown top-level key %q", k)
		}
	}
	fields := []struct {
		key  string
		into any
	}{
		{"version", &s.Version}, {"featureGates", &s.FeatureGates}, {"node", &s.Node},
		{"deviceClasses", &s.DeviceClasses}, {"claims", &s.Claims},
		{"allocatedClaims", &s.AllocatedClaims}, {"slices", &s.Slices}, {"runs", &s.Runs}, {"trace", &s.Trace},
	}
	for _, f := range fields {
		if v, ok := top[f.key]; ok && string(v) != "null" {
			if err := strictDecode(v, f.into); err != nil {
				return nil, s.ID, fmt.Errorf("%s: %w", f.key, err)
			}
		}
	}
	if s.Node == nil {
		return nil, s.ID, errors.New("node missing")
	}
	return s, s.ID, nil
}

// classLister mimics the scheduler's informer-backed lister.
type classLister map[string]*resourceapi.DeviceClass

func (l classLister) List() ([]*resourceapi.DeviceClass, error) {
	var out []*resourceapi.DeviceClass
	for _, c := range l {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if c, ok := l[name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "resource.k8s.io", Resource: "deviceclass"}, name)
}

// allocatedState builds what the scheduler's claim tracker gathers from all
// allocated claims (allocateddevices.go foreachAllocatedDevice +
// dra_manager.go GatherAllocatedState/ListAllAllocatedDevices).
func allocatedState(gates map[string]bool, claims []*resourceapi.ResourceClaim) structured.AllocatedState {
	consumable := gates["DRAConsumableCapacity"]
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: newSharedDeviceIDSet(),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, claim := range claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, result := range claim.Status.Allocation.Devices.Results {
			if result.AdminAccess != nil && *result.AdminAccess {
				continue
			}
			deviceID := structured.MakeDeviceID(result.Driver, result.Pool, result.Device)
			if consumable && result.ShareID != nil {
				insertSharedDeviceID(state.AllocatedSharedDeviceIDs, deviceID, result.ShareID)
				if result.ConsumedCapacity != nil {
					state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(deviceID, result.ConsumedCapacity))
				}
				continue
			}
			state.AllocatedDevices.Insert(deviceID)
		}
	}
	return state
}

func strPtr(s string) *string { return &s }

// evalCEL evaluates every selector on every device the way the chosen allocator implementation's
// selectorsMatch does (including which cel.Device fields it fills in).
func evalCEL(ctx context.Context, s *scenario, cache *cel.Cache, passMulti bool) []celEntry {
	classes := map[string]*resourceapi.DeviceClass{}
	for _, c := range s.DeviceClasses {
		classes[c.Name] = c
	}
	entries := []celEntry{}
	eval := func(source, object, request, class string, idx int, expression string) {
		for _, slice := range s.Slices {
			for i := range slice.Spec.Devices {
				d := &slice.Spec.Devices[i]
				e := celEntry{Source: source, Object: object, Request: request, Class: class, Selector: idx,
					Device: slice.Spec.Driver + "/" + slice.Spec.Pool.Name + "/" + d.Name}
				expr := cache.GetOrCompile(expression)
				if expr.Error != nil {
					e.Error = strPtr(expr.Error.Error())
				} else {
					deviceMatches(ctx, expr, celDeviceFor(slice, i, passMulti), &e)
				}
				entries = append(entries, e)
			}
		}
	}
	selectorsOf := func(sel []resourceapi.DeviceSelector) []string {
		var out []string
		for _, s := range sel {
			if s.CEL != nil {
				out = append(out, s.CEL.Expression)
			} else {
				out = append(out, "")
			}
		}
		return out
	}
	seenClass := sets.New[string]()
	doClass := func(name string) {
		if seenClass.Has(name) {
			return
		}
		seenClass.Insert(name)
		c, ok := classes[name]
		if !ok {
			return
		}
		for i, expr := range selectorsOf(c.Spec.Selectors) {
			eval("class", name, "", name, i, expr)
		}
	}
	// Class selectors first (every class referenced, in order of first reference) ...
	for _, claim := range s.Claims {
		for _, r := range claim.Spec.Devices.Requests {
			if r.Exactly != nil {
				doClass(r.Exactly.DeviceClassName)
			}
			for _, sub := range r.FirstAvailable {
				doClass(sub.DeviceClassName)
			}
		}
	}
	// ... then request and subrequest selectors.
	for _, claim := range s.Claims {
		obj := claim.Namespace + "/" + claim.Name
		for _, r := range claim.Spec.Devices.Requests {
			if r.Exactly != nil {
				for i, expr := range selectorsOf(r.Exactly.Selectors) {
					eval("claim", obj, r.Name, r.Exactly.DeviceClassName, i, expr)
				}
			}
			for _, sub := range r.FirstAvailable {
				for i, expr := range selectorsOf(sub.Selectors) {
					eval("claim", obj, r.Name+"/"+sub.Name, sub.DeviceClassName, i, expr)
				}
			}
		}
	}
	return entries
}

func deviceMatches(ctx context.Context, expr cel.CompilationResult, input cel.Device, e *celEntry) {
	defer func() {
		if r := recover(); r != nil {
			e.Result = nil
			e.Error = strPtr(fmt.Sprintf("panic: %v", r))
		}
	}()
	matches, _, err := expr.DeviceMatches(ctx, input)
	if err != nil {
		e.Error = strPtr(err.Error())
		seen := map[string]bool{err.Error(): true}
		for i := 0; i < errorReruns; i++ {
			if _, _, err2 := expr.DeviceMatches(ctx, input); err2 != nil && !seen[err2.Error()] {
				seen[err2.Error()] = true
				e.OtherErrors = append(e.OtherErrors, err2.Error())
			}
		}
	} else {
		m := matches
		e.Result = &m
	}
}

// allocateTimeout matches kube-scheduler's default DRA filter timeout (DRASchedulerFilterTimeout, 10s).
const allocateTimeout = 10 * time.Second

func runAllocator(s *scenario, features structured.Features, celFeatures cel.Features, tr *trace) (alloc *allocation, timedOut bool) {
	// An upstream panic (kube-scheduler would crash) is reported as outcome "panic".
	defer func() {
		if r := recover(); r != nil {
			alloc = &allocation{Outcome: "panic", Error: strPtr(fmt.Sprint(r)), Claims: []claimAllocation{}}
			timedOut = false
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), allocateTimeout)
	defer cancel()
	if tr != nil {
		ctx = klog.NewContext(ctx, newTraceLogger(tr))
	} else {
		ctx = klog.NewContext(ctx, klog.Background())
	}
	lister := classLister{}
	for _, c := range s.DeviceClasses {
		lister[c.Name] = c
	}
	// Fresh objects per run: the allocator must not see mutations from an earlier run.
	claims := make([]*resourceapi.ResourceClaim, len(s.Claims))
	for i, c := range s.Claims {
		claims[i] = c.DeepCopy()
	}
	slices := make([]*resourceapi.ResourceSlice, len(s.Slices))
	for i, sl := range s.Slices {
		slices[i] = sl.DeepCopy()
	}
	cache := cel.NewCache(10, celFeatures)
	alloc = &allocation{Claims: []claimAllocation{}}
	a, err := newAllocator(ctx, features, allocatedState(s.FeatureGates, s.AllocatedClaims), lister, slices, cache)
	if err != nil {
		alloc.Outcome = "error"
		alloc.Error = strPtr(err.Error())
		return alloc, false
	}
	results, err := a.Allocate(ctx, s.Node.DeepCopy(), claims)
	timedOut = ctx.Err() != nil
	switch {
	case err != nil && failedOnNode(err):
		// kube-scheduler's Filter: errors.Is(err, structured.ErrFailedAllocationOnNode) ->
		// statusUnschedulable(err.Error()) for this node (see allocation.Outcome).
		alloc.Outcome = "failed-on-node"
		alloc.Error = strPtr(err.Error())
	case err != nil:
		alloc.Outcome = "error"
		alloc.Error = strPtr(err.Error())
	case results == nil:
		// "If the claims cannot be allocated, it returns nil." (An empty, non-nil result is
		// the successful allocation of zero claims.)
		alloc.Outcome = "unallocatable"
	default:
		alloc.Outcome = "allocated"
		for i, r := range results {
			ca := claimAllocation{Claim: claims[i].Namespace + "/" + claims[i].Name, Results: []resultEntry{}, NodeSelector: r.NodeSelector}
			for _, dr := range r.Devices.Results {
				re := resultEntry{Request: dr.Request, Driver: dr.Driver, Pool: dr.Pool, Device: dr.Device}
				if dr.AdminAccess != nil && *dr.AdminAccess {
					t := true
					re.AdminAccess = &t
				}
				if dr.ConsumedCapacity != nil {
					re.ConsumedCapacity = map[string]string{}
					for k, q := range dr.ConsumedCapacity {
						re.ConsumedCapacity[string(k)] = q.String()
					}
				}
				ca.Results = append(ca.Results, re)
			}
			alloc.Claims = append(alloc.Claims, ca)
		}
	}
	return alloc, timedOut
}

func process(raw json.RawMessage) output {
	start := time.Now()
	out := output{Version: kubernetesMinor, Module: draModule, CEL: []celEntry{}, Alternatives: []*allocation{}}
	s, id, err := parseScenario(raw)
	out.ID = id
	if err != nil {
		out.InputError = strPtr(err.Error())
		return out
	}
	if s.Version != "" && s.Version != kubernetesMinor {
		out.InputError = strPtr(fmt.Sprintf("scenario is for %s, this oracle is %s", s.Version, kubernetesMinor))
		return out
	}
	if s.FeatureGates == nil {
		s.FeatureGates = map[string]bool{}
	}
	features := allocatorFeatures(s.FeatureGates)
	celFeatures := celFeatures(s.FeatureGates)
	out.Implementation = implementationFor(features)
	out.Deterministic = sortsPools(out.Implementation)

	out.CELSeesAllowMultipleAllocations = celSeesAllowMultipleAllocations(out.Implementation)
	out.CEL = evalCEL(context.Background(), s, cel.NewCache(10, celFeatures), out.CELSeesAllowMultipleAllocations)

	runs := 1
	if !out.Deterministic {
		runs = defaultRuns(s.Slices)
	}
	budgeted := true
	if s.Runs > 0 {
		runs = s.Runs
		budgeted = false
	}
	seen := map[string]bool{}
	seenDeepest := map[string]bool{}
	for i := 0; i < runs; i++ {
		var tr *trace
		if s.Trace {
			tr = &trace{entries: []traceEntry{}, allocated: map[string][][4]int{}, keepEntries: i == 0, claims: s.Claims}
		}
		a, timedOut := runAllocator(s, features, celFeatures, tr)
		if tr != nil && i == 0 {
			out.Trace, out.TraceTruncated = tr.entries, tr.truncated
		}
		if tr != nil && tr.deepest != nil && a.Outcome == "unallocatable" {
			if i == 0 {
				out.Deepest = tr.deepest
			}
			key, _ := json.Marshal(tr.deepest)
			if !seenDeepest[string(key)] && len(out.DeepestAlternatives) < maxDeepestAlternatives {
				seenDeepest[string(key)] = true
				out.DeepestAlternatives = append(out.DeepestAlternatives, tr.deepest)
			}
		}
		if timedOut {
			a = &allocation{Outcome: "timeout", Claims: []claimAllocation{}}
		}
		// A panic may depend on pool order; keep looking for the other outcomes.
		key, _ := json.Marshal(a)
		if i == 0 {
			out.Allocation = a
			// An error text can carry Go map order too (which bad attribute a selector names):
			// an error is repeated even where the search order is deterministic.
			if (a.Outcome == "error" || a.Outcome == "failed-on-node") && budgeted && runs < errorReruns {
				runs = errorReruns
			}
		}
		if !seen[string(key)] {
			seen[string(key)] = true
			out.Alternatives = append(out.Alternatives, a)
		}
		out.Runs = i + 1
		if timedOut {
			break
		}
		// A slow search repeated 400 times would take an hour; past the budget the
		// default runs stop (at least two are made). An explicit "runs" is honoured in full.
		if budgeted && i >= 1 && time.Since(start) > rerunBudget {
			break
		}
	}
	out.ElapsedMS = time.Since(start).Milliseconds()
	return out
}

// errorReruns: how often an error is repeated to see every text upstream can give for it. With k
// attributes in the map each comes first in roughly 1/k of the runs; 64 runs then miss one of 16
// with probability 1.6%, one of 8 with 0.02%.
const errorReruns = 64

// rerunBudget bounds the default reruns of a map-order allocator (see process).
const rerunBudget = 5 * time.Second

// defaultRuns: how often a map-order allocator is run so that every pool order
// is very likely seen. Only pool order is random (pools are gathered from a Go
// map; slices and devices keep their input order), so P! orders exist.
func defaultRuns(slices []*resourceapi.ResourceSlice) int {
	pools := sets.New[string]()
	for _, s := range slices {
		pools.Insert(s.Spec.Driver + "/" + s.Spec.Pool.Name)
	}
	fact := 1
	for i := 2; i <= pools.Len(); i++ {
		fact *= i
	}
	if pools.Len() <= 1 {
		return 2
	}
	runs := 12 * fact
	if runs > 400 {
		runs = 400
	}
	return runs
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Printf("kubernetes %s, %s\n", kubernetesMinor, draModule)
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "--fields" {
		printFields()
		return
	}
	// Silence klog: allocator logs at V(5+) only, but keep stderr clean anyway.
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)

	dec := json.NewDecoder(bufio.NewReaderSize(os.Stdin, 1<<20))
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if err == io.EOF {
				return
			}
			fmt.Fprintf(os.Stderr, "oracle: reading input: %v\n", err)
			os.Exit(2)
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || strings.HasPrefix(string(raw), "null") {
			continue
		}
		out := process(raw)
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(os.Stderr, "oracle: writing output: %v\n", err)
			os.Exit(2)
		}
		// Flush per scenario so a driver can stream (request/response over pipes).
		w.Flush()
	}
}

// printFields lists every JSON field path of the resource.k8s.io/v1 kinds in the pinned k8s.io/api, one per line
// (`Kind.spec.devices[].capacity{}.value`): kubectl-dra's coverage test compares it with the fields its analysis
// models, so that a field a new minor adds fails the build until it is modelled or makes verdicts undetermined.
func printFields() {
	roots := []struct {
		kind string
		t    reflect.Type
	}{
		{"ResourceClaim", reflect.TypeOf(resourceapi.ResourceClaim{})},
		{"ResourceClaimTemplate", reflect.TypeOf(resourceapi.ResourceClaimTemplate{})},
		{"DeviceClass", reflect.TypeOf(resourceapi.DeviceClass{})},
		{"ResourceSlice", reflect.TypeOf(resourceapi.ResourceSlice{})},
	}
	var out []string
	for _, r := range roots {
		walkFields(r.kind, r.t, &out, map[reflect.Type]bool{})
	}
	sort.Strings(out)
	for _, line := range out {
		fmt.Println(line)
	}
}

var jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

func walkFields(prefix string, t reflect.Type, out *[]string, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		*out = append(*out, prefix)
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			*out = append(*out, prefix)
			return
		}
		walkFields(prefix+"[]", t.Elem(), out, seen)
		return
	case reflect.Map:
		walkFields(prefix+"{}", t.Elem(), out, seen)
		return
	case reflect.Struct:
	default:
		*out = append(*out, prefix)
		return
	}
	if seen[t] {
		*out = append(*out, prefix+" (recursive)")
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name := strings.Split(tag, ",")[0]
		if name == "-" || !f.IsExported() {
			continue
		}
		if strings.Contains(tag, ",inline") || (f.Anonymous && name == "") {
			if f.Type.Name() == "TypeMeta" {
				continue
			}
			walkFields(prefix, f.Type, out, seen)
			continue
		}
		if name == "metadata" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		walkFields(prefix+"."+name, f.Type, out, seen)
	}
}
