package reconcileutil

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

var (
	t0 = metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Hour))
	t2 = metav1.NewTime(t0.Add(2 * time.Hour))
)

// ready returns the conditions SetReady makes from st on an object without status.
func ready(st effective.Status) []metav1.Condition {
	var conds []metav1.Condition
	SetReady(&conds, st, 1, t0)
	return conds
}

// TestSetReadyKeepsTransitionTime: the transition time moves only when Ready's status flips,
// so an unchanged status compares equal and is not written.
func TestSetReadyKeepsTransitionTime(t *testing.T) {
	conds := ready(effective.Status{InEffect: true, Reason: flowv1.ReasonAccepted, Message: "in effect"})
	SetReady(&conds, effective.Status{InEffect: true, Reason: flowv1.ReasonAccepted, Message: "in effect"}, 2, t1)
	c := meta.FindStatusCondition(conds, flowv1.ConditionReady)
	if c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Equal(&t0) || c.ObservedGeneration != 2 {
		t.Fatalf("unchanged Ready at a later generation: %+v", c)
	}
	SetReady(&conds, effective.Status{Reason: flowv1.ReasonDuplicatePriorityLevel, Message: "older one keeps it"}, 2, t2)
	c = meta.FindStatusCondition(conds, flowv1.ConditionReady)
	if c.Status != metav1.ConditionFalse || c.Reason != flowv1.ReasonDuplicatePriorityLevel || !c.LastTransitionTime.Equal(&t2) {
		t.Fatalf("after the flip: %+v", c)
	}
}

func TestAnnounceReadyOnlyOnTransitions(t *testing.T) {
	rp := &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	var none []metav1.Condition
	up := ready(effective.Status{InEffect: true, Reason: flowv1.ReasonAccepted, Message: "in effect"})
	down := ready(effective.Status{Reason: flowv1.ReasonDuplicatePriorityLevel, Message: "older one keeps it"})
	invalid := ready(effective.Status{Reason: flowv1.ReasonInvalidSpec, Message: "bad"})
	for _, tc := range []struct {
		name          string
		before, after []metav1.Condition
		want          string // "" for no event
	}{
		{"first status, in effect: not announced", none, up, ""},
		{"first status, ignored", none, down, "Warning DuplicatePriorityLevel"},
		{"unchanged", up, up, ""},
		{"into a duplicate", up, down, "Warning DuplicatePriorityLevel"},
		{"back in effect", down, up, "Normal Accepted"},
		{"other reason, still not ready", down, invalid, "Warning InvalidSpec"},
	} {
		rec := events.NewFakeRecorder(2)
		AnnounceReady(rec, rp, tc.before, tc.after)
		close(rec.Events)
		var got []string
		for e := range rec.Events {
			got = append(got, e)
		}
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: events %v, want none", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want)):
			t.Errorf("%s: events %v, want one %q", tc.name, got, tc.want)
		}
	}
}
