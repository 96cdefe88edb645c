package eventratelimit

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/managerbase"
)

func serverLimit(name string, generation int64, qps int32) *flowv1.EventRateLimit {
	return &flowv1.EventRateLimit{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: generation},
		Spec: flowv1.EventRateLimitSpec{Limits: []flowv1.EventRateLimitLimit{{Type: flowv1.EventRateLimitServer, QPS: qps, Burst: 2}}}}
}

// reconcileStatus runs the status reconciler once on the named object and returns the object
// as stored afterwards.
func reconcileStatus(t *testing.T, r *statusReconciler, name string) *flowv1.EventRateLimit {
	t.Helper()
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKey{Name: name}}); err != nil {
		t.Fatal(err)
	}
	var o flowv1.EventRateLimit
	if err := r.client.Get(context.Background(), client.ObjectKey{Name: name}, &o); err != nil {
		t.Fatal(err)
	}
	return &o
}

// TestStatusWithoutWebhook: without the events webhook the status says nothing is enforced
// (Ready False, Stalled), with one Warning event; an unchanged object is not written again.
func TestStatusWithoutWebhook(t *testing.T) {
	o := serverLimit("off", 1, 1)
	c := fake.NewClientBuilder().WithScheme(managerbase.Scheme()).WithObjects(o).WithStatusSubresource(o).Build()
	rec := events.NewFakeRecorder(4)
	r := &statusReconciler{client: c, recorder: rec, clock: clocktesting.NewFakePassiveClock(time.Now()), period: time.Second}
	got := reconcileStatus(t, r, "off")
	ready := meta.FindStatusCondition(got.Status.Conditions, flowv1.ConditionReady)
	if ready == nil || ready.Reason != flowv1.ReasonEnforcementDisabled || ready.Status != metav1.ConditionFalse ||
		!meta.IsStatusConditionTrue(got.Status.Conditions, flowv1.ConditionStalled) || got.Status.ObservedGeneration != 1 {
		t.Fatalf("status %+v", got.Status)
	}
	written := got.ResourceVersion
	if again := reconcileStatus(t, r, "off"); again.ResourceVersion != written {
		t.Error("an unchanged status was written again")
	}
	if n := len(rec.Events); n != 1 {
		t.Errorf("%d events, want one Warning for Ready=False", n)
	}
}

// TestStatusCountsTheEnginesGeneration: with the webhook on, the status reports the engine's
// counts once the engine enforces the object's generation, and an invalid object is not
// handed to the engine and says why.
func TestStatusCountsTheEnginesGeneration(t *testing.T) {
	valid, invalid := serverLimit("valid", 2, 1), serverLimit("invalid", 1, 0)
	c := fake.NewClientBuilder().WithScheme(managerbase.Scheme()).WithObjects(valid, invalid).
		WithStatusSubresource(valid, invalid).Build()
	engine := eventratelimit.New(clocktesting.NewFakePassiveClock(time.Now()), nil)
	r := &statusReconciler{client: c, recorder: events.NewFakeRecorder(4), clock: clocktesting.NewFakePassiveClock(time.Now()),
		engine: engine, period: time.Second}
	if got := reconcileStatus(t, r, "valid"); got.Status.ObservedGeneration != 0 {
		t.Fatalf("status written before the engine enforces the generation: %+v", got.Status)
	}
	cfg := &configReconciler{client: c, engine: engine}
	if _, err := cfg.Reconcile(context.Background(), reconcile.Request{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := engine.Counts("invalid"); ok {
		t.Error("the engine enforces an invalid object")
	}
	engine.Admit(&eventratelimit.Attributes{})
	got := reconcileStatus(t, r, "valid")
	if !meta.IsStatusConditionTrue(got.Status.Conditions, flowv1.ConditionReady) || got.Status.ObservedGeneration != 2 ||
		got.Status.AcceptedEvents != 1 || got.Status.CountingSince == nil {
		t.Errorf("enforced status %+v, want Ready and one accepted event", got.Status)
	}
	bad := reconcileStatus(t, r, "invalid")
	if ready := meta.FindStatusCondition(bad.Status.Conditions, flowv1.ConditionReady); ready == nil || ready.Reason != flowv1.ReasonInvalidSpec {
		t.Errorf("invalid object's status %+v", bad.Status)
	}
}
