package controllers

import (
	"context"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// TestConfirmProjectionFromCache: a projection the snapshot saw pending is confirmed once the
// cache holds the planned native object, and only then.
func TestConfirmProjectionFromCache(t *testing.T) {
	rps := []flowv1.RequestPriority{*versioned(userRP("a", 10), "rp-a", 1)}
	fss := []flowv1.FlowSchema{*versioned(userFS("x", "a"), "fs-x", 1)}
	snap := buildSnapshot(rps, fss, &native.Existing{}, nil, time.Now())
	rpView, fsView := snap.rps["a"], snap.fss["x"]
	if rpView.projection.Reason != flowv1.ReasonPending || fsView.projection.Reason != flowv1.ReasonPending {
		t.Fatalf("no native objects yet, but projections %+v and %+v", rpView.projection, fsView.projection)
	}
	ctx := context.Background()
	plc, schema := snap.plan.PriorityLevels[0].DeepCopy(), snap.plan.FlowSchemas[0].DeepCopy()

	empty := fake.NewClientBuilder().WithScheme(testScheme).Build()
	if v := confirmFlowSchema(ctx, empty, snap, "x", fsView); v.projection.Reason != flowv1.ReasonPending {
		t.Errorf("no native FlowSchema in the cache, but confirmed: %+v", v.projection)
	}

	stale := schema.DeepCopy()
	stale.Spec.MatchingPrecedence++
	differs := fake.NewClientBuilder().WithScheme(testScheme).WithObjects(stale, plc.DeepCopy()).Build()
	if v := confirmFlowSchema(ctx, differs, snap, "x", fsView); v.projection.Reason != flowv1.ReasonPending {
		t.Errorf("a native FlowSchema of another precedence, but confirmed: %+v", v.projection)
	}

	written := fake.NewClientBuilder().WithScheme(testScheme).WithObjects(schema, plc).Build()
	v := confirmFlowSchema(ctx, written, snap, "x", fsView)
	if !v.projection.Projected || v.projectionWait(time.Now(), false) != 0 {
		t.Errorf("the planned native FlowSchema in the cache, but %+v (wait %s)", v.projection, v.projectionWait(time.Now(), false))
	}
	if v := confirmRequestPriority(ctx, written, snap, "a", rpView); !v.projection.Projected {
		t.Errorf("the planned native level in the cache, but %+v", v.projection)
	}
}

// TestToSource maps a native object to the object it is projected from, by its source
// annotation, and nothing else.
func TestToSource(t *testing.T) {
	snap := buildSnapshot([]flowv1.RequestPriority{*versioned(userRP("a", 10), "rp-a", 1)},
		[]flowv1.FlowSchema{*versioned(userFS("x", "a"), "fs-x", 1)}, &native.Existing{}, nil, time.Now())
	schema := snap.plan.FlowSchemas[0].DeepCopy()
	foreign := &flowcontrolv1.FlowSchema{}
	foreign.Name = "global-default"
	for _, c := range []struct {
		name string
		kind string
		obj  client.Object
		want string
	}{
		{"a native FlowSchema of ours", native.KindFlowSchema, schema, "x"},
		{"a native FlowSchema, seen by the RequestPriority reconciler", native.KindRequestPriority, schema, ""},
		{"kube-apiserver's own FlowSchema", native.KindFlowSchema, foreign, ""},
	} {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		toSource(c.kind).Create(context.Background(), event.CreateEvent{Object: c.obj}, q)
		if got := drain(q); c.want == "" && len(got) != 0 || c.want != "" && (len(got) != 1 || got[0] != c.want) {
			t.Errorf("%s: enqueued %v, want %q", c.name, got, c.want)
		}
	}
}

// drain returns the names queued in q, and shuts it down.
func drain(q workqueue.TypedRateLimitingInterface[reconcile.Request]) []string {
	defer q.ShutDown()
	var names []string
	for q.Len() > 0 {
		item, _ := q.Get()
		names = append(names, item.Name)
		q.Done(item)
	}
	return names
}
