package scale

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/test/harness"
)

// barrierName is the FlowSchema the test creates after convergence. It refers to a
// RequestPriority that does not exist, so it matches nothing and changes no other object:
// the operator's only write for it is its own status.
const barrierName = "zz-scale-barrier"

// barrierFlowSchema builds the barrier: a matching priority the load already uses, so that
// it takes no native precedence of its own either.
func barrierFlowSchema() *flowv1.FlowSchema {
	return &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: barrierName},
		Spec: flowv1.FlowSchemaSpec{
			MatchingPriority: 1000,
			RequestPriority:  flowv1.RequestPriorityReference{Name: barrierName + "-missing"},
			Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{{Equals: &flowv1.ValueTest{
				Field: flowv1.FieldUser, Value: "system:serviceaccount:scale-barrier:none",
			}}}}},
		}}
}

// passBarrier creates the barrier after convergence and waits until the operator's status
// write for it is in the audit log. Writes the operator still had to make for the load are
// then in the log as well (the operator has handled a later change, and the log backend
// writes in order), so the count that follows cannot miss them by reading too early, as a
// fixed sleep could on a busy machine. The operator reports the missing RequestPriority only
// once the users' objects have been quiet for its quiet period (seconds): the wait first
// watches the barrier's status through the API, which costs a GET, and only then reads the
// audit log (thousands of lines to decode at each poll).
func passBarrier(ctx context.Context, t *testing.T, c client.Client, auditLog string, operator func(string) bool) {
	t.Helper()
	barrier := barrierFlowSchema()
	if err := c.Create(ctx, barrier); err != nil {
		t.Fatalf("barrier: %v", err)
	}
	harness.Eventually(t, 2*time.Minute, "the barrier FlowSchema's status", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(barrier), barrier); err != nil {
			return err
		}
		if barrier.Status.ObservedGeneration == 0 {
			return fmt.Errorf("%s has no status yet", barrierName)
		}
		return nil
	})
	harness.Eventually(t, 2*time.Minute, "the operator's status write for the barrier FlowSchema in the audit log", func() error {
		counts, err := countWrites(auditLog, operator)
		if err != nil {
			return err
		}
		if counts.status[barrierKey] == 0 {
			return fmt.Errorf("no status write for %s yet", barrierKey)
		}
		return nil
	})
}

// barrierKey is the barrier's key in writeCounts.status.
const barrierKey = "flowschemas/" + barrierName

// withoutBarrier removes the barrier's own writes from counts, after checking that they are
// what the barrier may cause: status writes of the barrier itself and nothing native.
func withoutBarrier(t *testing.T, counts *writeCounts) {
	t.Helper()
	if n := counts.native["flowschemas/"+barrierName]; n > 0 {
		t.Errorf("the barrier FlowSchema refers to a missing RequestPriority but was projected (%d native writes)", n)
	}
	delete(counts.status, barrierKey)
}
