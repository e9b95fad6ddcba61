package main

// The allocator's own per-device decisions (issue 11): upstream logs every decision about a device at V(7)
// through the logger in the context (allocator_<channel>.go: "Device in use", "Device not selectable",
// "CEL result", "Insufficient counters", "Device capacity not enough", "Device not usable", the constraint
// messages, "Device allocated"/"Device deallocated") and where the search stands at V(6) ("Allocating one
// device": claim, request, subrequest and device slot). traceSink records those key/value pairs as they are
// logged (nothing is parsed from text) and tags each per-device entry with the search position it was made at.

import (
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/klog/v2"
)

// maxTrace bounds one run's trace: a backtracking search can log millions of entries.
const maxTrace = 50000

// maxDeepest bounds the entries kept for the deepest position (deepestRecord); maxDeepestRerun in the reruns of a
// map-order implementation (only their distinct records are reported, at most maxDeepestAlternatives).
const (
	maxDeepest             = 20000
	maxDeepestRerun        = 2000
	maxDeepestAlternatives = 16
)

// deepestRecord: the deepest position (claim, request, device slot; subrequests are alternatives at one depth)
// the search reached, as allocateOne logs it ("Allocating one device" at V(6), or "Allocation for 'all' devices
// didn't succeed: no devices found" for a request for all devices that has none), and the V(7) entries made at
// that position, every visit of it (issue 29 item 4: where upstream ran out of candidates first; the fidelity
// suite reads the reason of each rejection from these entries as it does for the per-device reasons).
type deepestRecord struct {
	Claim      int          `json:"claim"`
	Request    int          `json:"request"`
	SubRequest int          `json:"subRequest"`
	Slot       int          `json:"slot"`
	NoDevices  bool         `json:"noDevices,omitempty"`
	Entries    []traceEntry `json:"entries"`
	Truncated  bool         `json:"truncated,omitempty"`
}

type traceEntry struct {
	Msg        string  `json:"msg"`
	Device     string  `json:"device,omitempty"`
	Claim      int     `json:"claim"`
	Request    int     `json:"request"`
	SubRequest int     `json:"subRequest"`
	Slot       int     `json:"slot"`
	Source     string  `json:"source,omitempty"` // CEL result: "class" or "claim"
	Selector   *int    `json:"selector,omitempty"`
	Matches    *bool   `json:"matches,omitempty"`
	Err        *string `json:"err,omitempty"`
}

type trace struct {
	entries   []traceEntry
	truncated bool
	// The search's call stack as far as the log shows it: allocateOne logs its position (claim, request,
	// subrequest, device slot) when called but not when it returns. A call replaces every frame at or after its
	// own position (a sibling subrequest, a retry of the same slot), and undoing a device ("Device deallocated",
	// done by the caller after a deeper call failed) returns to the frame that allocated it.
	stack     [][4]int
	allocated map[string][][4]int // per device, where each of its allocations in flight was made (LIFO)
	// The device of a "Device allocated" that is the latest entry: allocateDevice may still recheck its
	// capacity and roll it back, logging the device object instead of its ID and no "Device deallocated".
	justAllocated string
	searching     bool // false while the claims are validated (allocationMode All selects its devices then)
	// keepEntries: record every entry (the first run); otherwise only the deepest position's.
	keepEntries bool
	claims      []*resourceapi.ResourceClaim
	deepest     *deepestRecord
}

// reach: the search is at position p; a deeper position than any before starts a new record.
func (t *trace) reach(p [4]int, noDevices bool) {
	d := t.deepest
	if d == nil || less([3]int{d.Claim, d.Request, d.Slot}, depth(p)) {
		t.deepest = &deepestRecord{Claim: p[0], Request: p[1], SubRequest: p[2], Slot: p[3], NoDevices: noDevices, Entries: []traceEntry{}}
		return
	}
	if depth(p) == [3]int{d.Claim, d.Request, d.Slot} {
		d.SubRequest = p[2]
		d.NoDevices = d.NoDevices || noDevices
	}
}

// requestPosition: claim and request (subrequest) index of a request named as allocateOne's "no devices found"
// names it: the claim object and the request's or subrequest's own name.
func (t *trace) requestPosition(claim any, name string) ([4]int, bool) {
	ref, _ := claim.(klog.ObjectRef)
	for ci, c := range t.claims {
		if c.Namespace != ref.Namespace || c.Name != ref.Name {
			continue
		}
		for ri, r := range c.Spec.Devices.Requests {
			if r.Exactly != nil && r.Name == name {
				return [4]int{ci, ri, 0, 0}, true
			}
			for si, sub := range r.FirstAvailable {
				if sub.Name == name {
					return [4]int{ci, ri, si, 0}, true
				}
			}
		}
	}
	return [4]int{}, false
}

// depth orders positions along the search path: claim, request, device slot.
func depth(p [4]int) [3]int { return [3]int{p[0], p[1], p[3]} }

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func (t *trace) pos() [4]int {
	if len(t.stack) == 0 {
		return [4]int{}
	}
	return t.stack[len(t.stack)-1]
}

type traceSink struct{ t *trace }

func (s traceSink) Init(logr.RuntimeInfo)          {}
func (s traceSink) Enabled(level int) bool         { return level <= 7 }
func (s traceSink) Error(error, string, ...any)    {}
func (s traceSink) WithValues(...any) logr.LogSink { return s }
func (s traceSink) WithName(string) logr.LogSink   { return s }
func newTraceLogger(t *trace) logr.Logger          { return logr.New(traceSink{t}) }
func intOf(v any) int                              { i, _ := v.(int); return i }

func (s traceSink) Info(level int, msg string, kv ...any) {
	t := s.t
	get := func(key string) (any, bool) {
		for i := 0; i+1 < len(kv); i += 2 {
			if k, _ := kv[i].(string); k == key {
				return kv[i+1], true
			}
		}
		return nil, false
	}
	if msg == "Allocating one device" {
		var p [4]int
		for i, k := range []string{"currentClaim", "currentRequest", "currentSubRequest", "currentDevice"} {
			v, _ := get(k)
			p[i] = intOf(v)
		}
		for len(t.stack) > 0 && !less(depth(t.stack[len(t.stack)-1]), depth(p)) {
			t.stack = t.stack[:len(t.stack)-1]
		}
		t.stack = append(t.stack, p)
		t.searching = true
		t.justAllocated = ""
		t.reach(p, false)
		return
	}
	if msg == "Allocation for 'all' devices didn't succeed: no devices found" {
		c, _ := get("claim")
		r, _ := get("request")
		if p, ok := t.requestPosition(c, fmt.Sprint(r)); ok {
			t.searching = true
			t.reach(p, true)
		}
		return
	}
	if level < 7 {
		return
	}
	// A constraint's verdict is logged without the device: it belongs to the device being allocated, the
	// one of the entries just before it.
	dev, ok := get("device")
	if !ok {
		dev = ""
	}
	id := fmt.Sprint(dev)
	if t.justAllocated != "" && strings.HasPrefix(id, "{") &&
		(msg == "Device capacity not enough" || strings.HasPrefix(msg, "Failed to compare device capacity request")) {
		// The recheck rejected the device just allocated: that allocation is undone, so no later
		// "Device deallocated" belongs to it.
		id = t.justAllocated
		if qs := t.allocated[id]; len(qs) > 0 {
			t.allocated[id] = qs[:len(qs)-1]
		}
	}
	t.justAllocated = ""
	if msg == "Device deallocated" {
		// Undoing is last in, first out, also for a device several requests share (allowMultipleAllocations).
		if qs := t.allocated[id]; len(qs) > 0 {
			q := qs[len(qs)-1]
			t.allocated[id] = qs[:len(qs)-1]
			for len(t.stack) > 0 && less(depth(q), depth(t.stack[len(t.stack)-1])) {
				t.stack = t.stack[:len(t.stack)-1]
			}
		}
	}
	p := t.pos()
	if msg == "Device allocated" {
		t.allocated[id] = append(t.allocated[id], p)
		t.justAllocated = id
	}
	e := traceEntry{Msg: msg, Device: id, Claim: p[0], Request: p[1], SubRequest: p[2], Slot: p[3]}
	if !t.searching {
		e.Claim, e.Request, e.SubRequest, e.Slot = -1, -1, -1, -1
	}
	if msg == "CEL result" {
		if _, isClass := get("class"); isClass {
			e.Source = "class"
		} else {
			e.Source = "claim"
		}
		if v, ok := get("selector"); ok {
			i := intOf(v)
			e.Selector = &i
		}
		if v, ok := get("matches"); ok {
			if b, ok := v.(bool); ok {
				e.Matches = &b
			}
		}
		if v, ok := get("err"); ok && v != nil {
			if err, ok := v.(error); ok && err != nil {
				s := err.Error()
				e.Err = &s
			}
		}
	}
	if d := t.deepest; t.searching && d != nil && depth(p) == [3]int{d.Claim, d.Request, d.Slot} {
		limit := maxDeepest
		if !t.keepEntries {
			limit = maxDeepestRerun
		}
		if len(d.Entries) < limit {
			d.Entries = append(d.Entries, e)
		} else {
			d.Truncated = true
		}
	}
	if !t.keepEntries {
		return
	}
	if len(t.entries) >= maxTrace {
		t.truncated = true
		return
	}
	t.entries = append(t.entries, e)
}
