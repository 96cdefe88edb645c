package reconcileutil

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// TestSetStalledReconciling checks which Ready / Projected combinations make an object Stalled
// or Reconciling for kstatus, with the cause's reason and message, and that a cause that goes
// away removes the condition.
func TestSetStalledReconciling(t *testing.T) {
	ready := func(status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: flowv1.ConditionReady, Status: status, Reason: reason, Message: "ready: " + reason}
	}
	projected := func(status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: flowv1.ConditionProjected, Status: status, Reason: reason, Message: "projected: " + reason}
	}
	cases := []struct {
		name                 string
		in                   []metav1.Condition
		stalled, reconciling string // expected reason; "" means absent
	}{
		{"ready, projection off", []metav1.Condition{ready("True", flowv1.ReasonAccepted)}, "", ""},
		{"ready and projected", []metav1.Condition{ready("True", flowv1.ReasonAccepted), projected("True", flowv1.ReasonProjected)}, "", ""},
		{"duplicate level", []metav1.Condition{ready("False", flowv1.ReasonDuplicatePriorityLevel), projected("False", flowv1.ReasonNotInEffect)}, flowv1.ReasonDuplicatePriorityLevel, ""},
		{"missing reference", []metav1.Condition{ready("False", flowv1.ReasonRequestPriorityNotFound)}, flowv1.ReasonRequestPriorityNotFound, ""},
		{"events webhook off", []metav1.Condition{ready("False", flowv1.ReasonEnforcementDisabled)}, flowv1.ReasonEnforcementDisabled, ""},
		{"not expressible", []metav1.Condition{ready("True", flowv1.ReasonAccepted), projected("False", flowv1.ReasonNotExpressible)}, flowv1.ReasonNotExpressible, ""},
		{"name conflict", []metav1.Condition{ready("True", flowv1.ReasonAccepted), projected("False", flowv1.ReasonNameConflict)}, flowv1.ReasonNameConflict, ""},
		{"pending", []metav1.Condition{ready("True", flowv1.ReasonAccepted), projected("False", flowv1.ReasonPending)}, "", flowv1.ReasonPending},
		{"default withheld on purpose", []metav1.Condition{ready("True", flowv1.ReasonAccepted), projected("False", flowv1.ReasonShadowedByNative)}, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conds := append([]metav1.Condition(nil), tc.in...)
			// A stale Stalled and Reconciling from an earlier state must be replaced or removed.
			meta.SetStatusCondition(&conds, metav1.Condition{Type: flowv1.ConditionStalled, Status: "True", Reason: "Old", Message: "old"})
			meta.SetStatusCondition(&conds, metav1.Condition{Type: flowv1.ConditionReconciling, Status: "True", Reason: "Old", Message: "old"})
			SetStalledReconciling(&conds, 4, t1)
			checkAbnormalTrue(t, conds, flowv1.ConditionStalled, tc.stalled)
			checkAbnormalTrue(t, conds, flowv1.ConditionReconciling, tc.reconciling)
		})
	}
}

func checkAbnormalTrue(t *testing.T, conds []metav1.Condition, condType, wantReason string) {
	t.Helper()
	c := meta.FindStatusCondition(conds, condType)
	if wantReason == "" {
		if c != nil {
			t.Errorf("%s = %+v, want absent", condType, *c)
		}
		return
	}
	switch {
	case c == nil:
		t.Errorf("%s absent, want True/%s", condType, wantReason)
	case c.Status != metav1.ConditionTrue || c.Reason != wantReason || c.ObservedGeneration != 4:
		t.Errorf("%s = %s/%s (generation %d), want True/%s (generation 4)", condType, c.Status, c.Reason, c.ObservedGeneration, wantReason)
	case c.Message == "" || c.Message == "old":
		t.Errorf("%s message %q, want the cause's message", condType, c.Message)
	}
}
