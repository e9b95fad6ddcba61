// The 1.34 ResourceSlice tracker as kube-scheduler runs it with DRADeviceTaints on: DeviceTaintRules
// (resource.k8s.io/v1alpha3, with their deviceClassName and CEL selectors) applied to the slices by
// k8s.io/dynamic-resource-allocation v0.34.13 resourceslice/tracker, over a fake clientset's informers.
//
// stdin: one JSON object per line, {"slices": [ResourceSlice v1], "rules": [DeviceTaintRule v1alpha3],
// "classes": [DeviceClass v1]}; stdout: one line each, {"slices": {NAME: {DEVICE: [taint...]}}, "failed": [NAME]}:
// the slices the tracker lists after its informers synced, each device with the taints it carries then, and the
// slices it failed to patch at some point of the sync (it then keeps its earlier view of one, or none: which one
// depends on the order the informers delivered the objects in).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	resourcealphaapi "k8s.io/api/resource/v1alpha3"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
)

type input struct {
	Slices  []resourceapi.ResourceSlice        `json:"slices"`
	Rules   []resourcealphaapi.DeviceTaintRule `json:"rules"`
	Classes []resourceapi.DeviceClass          `json:"classes"`
}

type taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// failed records the slices the tracker reports it could not patch (its handleError is
// utilruntime.HandleErrorWithContext, with the slice under the key "resourceslice").
var (
	mu     sync.Mutex
	failed = map[string]bool{}
)

func record(_ context.Context, _ error, _ string, keysAndValues ...interface{}) {
	for i := 0; i+1 < len(keysAndValues); i += 2 {
		if keysAndValues[i] == "resourceslice" {
			if ref, ok := keysAndValues[i+1].(klog.ObjectRef); ok {
				mu.Lock()
				failed[ref.Name] = true
				mu.Unlock()
			}
		}
	}
}

func failedSlices() []string {
	mu.Lock()
	defer mu.Unlock()
	out := []string{}
	for name := range failed {
		out = append(out, name)
	}
	sort.Strings(out)
	failed = map[string]bool{}
	return out
}

func run(in input) (map[string]map[string][]taint, error) {
	var objs []runtime.Object
	for i := range in.Slices {
		objs = append(objs, &in.Slices[i])
	}
	for i := range in.Rules {
		objs = append(objs, &in.Rules[i])
	}
	for i := range in.Classes {
		objs = append(objs, &in.Classes[i])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	client := fake.NewSimpleClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	// Deferred calls run last first: the informers stop when ctx is cancelled, and Shutdown waits for them.
	defer factory.Shutdown()
	defer cancel()
	t, err := tracker.StartTracker(ctx, tracker.Options{
		EnableDeviceTaints: true,
		SliceInformer:      factory.Resource().V1().ResourceSlices(),
		TaintInformer:      factory.Resource().V1alpha3().DeviceTaintRules(),
		ClassInformer:      factory.Resource().V1().DeviceClasses(),
		KubeClient:         client,
	})
	if err != nil {
		return nil, err
	}
	defer t.Stop()
	factory.Start(ctx.Done())
	for !t.HasSynced() {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("tracker did not sync: %w", ctx.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
	slices, err := t.ListPatchedResourceSlices()
	if err != nil {
		return nil, err
	}
	out := map[string]map[string][]taint{}
	for _, s := range slices {
		devs := map[string][]taint{}
		for _, d := range s.Spec.Devices {
			ts := []taint{}
			for _, x := range d.Taints {
				ts = append(ts, taint{Key: x.Key, Value: x.Value, Effect: string(x.Effect)})
			}
			devs[d.Name] = ts
		}
		out[s.Name] = devs
	}
	return out, nil
}

func main() {
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{record}
	dec := json.NewDecoder(bufio.NewReaderSize(os.Stdin, 1<<20))
	enc := json.NewEncoder(os.Stdout)
	for {
		var in input
		if err := dec.Decode(&in); err != nil {
			if err == io.EOF {
				return
			}
			fmt.Fprintf(os.Stderr, "tracker134: reading input: %v\n", err)
			os.Exit(2)
		}
		slices, err := run(in)
		out := map[string]any{"slices": slices, "failed": failedSlices()}
		if err != nil {
			out["error"] = err.Error()
		}
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(os.Stderr, "tracker134: writing output: %v\n", err)
			os.Exit(2)
		}
	}
}
