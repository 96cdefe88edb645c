package apf_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// grabAll is a user FlowSchema at matchingPriority 0 that matches every request.
func grabAll(priority string) flowv1.FlowSchema {
	return flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "grab-all"}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: 0, RequestPriority: flowv1.RequestPriorityReference{Name: priority},
		Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{}}}}}
}

// TestEngineNoLockOut: a FlowSchema at matchingPriority 0 matching everything sends all traffic
// to a one-seat level with a one-request queue; once the seat and the queue are taken, other
// users are rejected, yet a system:masters request runs at once at the exempt level.
func TestEngineNoLockOut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rps    []flowv1.RequestPriority
		exempt string
	}{
		{"backstop level 0", []flowv1.RequestPriority{rp("one-seat", 100, 10, 1, 0, 1)}, effective.BackstopExemptName},
		{"actual level 0", []flowv1.RequestPriority{rp("one-seat", 100, 10, 1, 0, 1), rp("admins", 0, 0, 0, 0, 0)}, "admins"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := effective.Compute(tc.rps, []flowv1.FlowSchema{grabAll("one-seat")})
			e := apf.NewEngine(cfg, dispatch.Options{ServerConcurrencyLimit: 1})
			ctx := context.Background()
			running := startBlocked(e, ctx, "alice", "GET", "/api/v1/namespaces/a/pods")
			<-running.started
			waiting := startBlocked(e, ctx, "bob", "GET", "/api/v1/namespaces/a/pods")
			waitFor(t, "the second request to queue", func() bool { return e.State().Waiting == 1 })

			r, o := e.Handle(ctx, attrs("carol", nil, "GET", "/healthz"), func() {})
			if o != dispatch.RejectedQueueFull || r.Schema.Name != "grab-all" {
				t.Fatalf("another user: %v at %s; want RejectedQueueFull at grab-all (the trap works)", o, r.Schema.Name)
			}
			ran := false
			r, o = e.Handle(ctx, attrs("admin", []string{"system:masters"}, "DELETE", "/apis/flowcontrol.apf-operator.io/v1alpha1/flowschemas/grab-all"),
				func() { ran = true })
			if o != dispatch.Executed || !ran {
				t.Errorf("system:masters: outcome %v, ran %v; want Executed at once", o, ran)
			}
			if r.Schema != cfg.MastersBackstop || r.Schema.Name != effective.BackstopExemptName ||
				r.Schema.Priority.Name != tc.exempt || !r.Schema.Priority.Exempt() {
				t.Errorf("system:masters classified to %s/%s; want the implicit %s at exempt %s",
					r.Schema.Name, r.Schema.Priority.Name, effective.BackstopExemptName, tc.exempt)
			}
			close(running.release)
			<-waiting.started
			close(waiting.release)
			<-running.done
			<-waiting.done
		})
	}
}
