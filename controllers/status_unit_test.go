package controllers

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native"
)

var (
	t0 = metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Hour))
	t2 = metav1.NewTime(t0.Add(2 * time.Hour))
)

func accepted() effective.Status {
	return effective.Status{InEffect: true, Reason: flowv1.ReasonAccepted, Message: "in effect", FlowSchemas: 2, AssuredFraction: "0.0714"}
}

func duplicate() effective.Status {
	return effective.Status{Reason: flowv1.ReasonDuplicatePriorityLevel, Message: "older one keeps it", FlowSchemas: 1}
}

// TestRequestPriorityStatusTransitions follows one object through status computations as the
// reconciler makes them, checking what is written and when the transition time moves.
func TestRequestPriorityStatusTransitions(t *testing.T) {
	rp := &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 3}}

	first := requestPriorityStatus(rp, accepted(), t0)
	ready := meta.FindStatusCondition(first.Conditions, flowv1.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionTrue || ready.Reason != flowv1.ReasonAccepted || !ready.LastTransitionTime.Equal(&t0) ||
		ready.ObservedGeneration != 3 || first.ObservedGeneration != 3 || first.FlowSchemas != 2 || first.AssuredConcurrencyFraction != "0.0714" {
		t.Fatalf("first status = %+v", first)
	}
	if len(rp.Status.Conditions) != 0 {
		t.Error("requestPriorityStatus modified the object")
	}

	// Nothing changed, later: equal status, so the reconciler writes nothing.
	rp.Status = first
	if again := requestPriorityStatus(rp, accepted(), t1); !equality.Semantic.DeepEqual(again, first) {
		t.Errorf("unchanged input at a later time gives a different status: %+v", again)
	}

	// Ready flips: new transition time; the fraction is cleared.
	second := requestPriorityStatus(rp, duplicate(), t1)
	ready = meta.FindStatusCondition(second.Conditions, flowv1.ConditionReady)
	if ready.Status != metav1.ConditionFalse || ready.Reason != flowv1.ReasonDuplicatePriorityLevel || !ready.LastTransitionTime.Equal(&t1) ||
		second.AssuredConcurrencyFraction != "" || second.FlowSchemas != 1 {
		t.Errorf("after the flip: %+v", second)
	}

	// Reason changes but Ready stays False: the transition time stays.
	rp.Status = second
	notInEffect := effective.Status{Reason: flowv1.ReasonInvalidSpec, Message: "bad"}
	third := requestPriorityStatus(rp, notInEffect, t2)
	if ready = meta.FindStatusCondition(third.Conditions, flowv1.ConditionReady); ready.Reason != flowv1.ReasonInvalidSpec || !ready.LastTransitionTime.Equal(&t1) {
		t.Errorf("reason change without a flip: %+v", ready)
	}
}

func TestFlowSchemaStatusFollowsGeneration(t *testing.T) {
	fs := &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "f", Generation: 1}}
	fs.Status = flowSchemaStatus(fs, accepted(), t0)
	fs.Generation = 2
	st := flowSchemaStatus(fs, accepted(), t1)
	ready := meta.FindStatusCondition(st.Conditions, flowv1.ConditionReady)
	if st.ObservedGeneration != 2 || ready.ObservedGeneration != 2 || !ready.LastTransitionTime.Equal(&t0) {
		t.Errorf("status after a spec change: %+v", st)
	}
}

// projected is the projection of a view whose native object holds it.
func projected(nativeName string) native.Result {
	return native.Result{Projected: true, Reason: flowv1.ReasonProjected, Message: "enforced", NativeName: nativeName}
}

// TestNextRequestPriorityStatus: the RequestPriority adapter writes a first status with the
// projection and seats, nothing when the view is unchanged, and marks a change of the seats
// alone as figures only.
func TestNextRequestPriorityStatus(t *testing.T) {
	rp := &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 1}}
	v := objectView{status: accepted(), projection: projected("apf-a"), nativeSeats: ptr.To[int32](7)}
	change, changed := nextRequestPriorityStatus(rp, v, true, t0)
	if !changed || !change.write.first || change.write.figuresOnly || len(change.before) != 0 {
		t.Fatalf("first status: changed %v, change %+v", changed, change)
	}
	if rp.Status.NativeName != "apf-a" || *rp.Status.NativeNominalSeats != 7 || !equality.Semantic.DeepEqual(change.after, rp.Status.Conditions) ||
		!meta.IsStatusConditionTrue(rp.Status.Conditions, flowv1.ConditionProjected) {
		t.Fatalf("first status = %+v", rp.Status)
	}
	if _, changed := nextRequestPriorityStatus(rp, v, true, t1); changed {
		t.Error("an unchanged view at a later time changed the status")
	}
	v.nativeSeats = ptr.To[int32](8)
	change, changed = nextRequestPriorityStatus(rp, v, true, t1)
	if !changed || change.write.first || !change.write.figuresOnly || *rp.Status.NativeNominalSeats != 8 {
		t.Errorf("new seats: changed %v, change %+v, status %+v", changed, change, rp.Status)
	}
}

// TestNextFlowSchemaStatus: the FlowSchema adapter marks a first status that reports its
// RequestPriority missing, and without projection it writes no Projected condition.
func TestNextFlowSchemaStatus(t *testing.T) {
	fs := &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "f", Generation: 1}}
	missing := effective.Status{Reason: flowv1.ReasonRequestPriorityNotFound, Message: "no RequestPriority x"}
	change, changed := nextFlowSchemaStatus(fs, objectView{status: missing}, false, t0)
	if !changed || !change.write.first || !change.write.danglingReference {
		t.Fatalf("first status naming a missing RequestPriority: changed %v, change %+v", changed, change)
	}
	if meta.FindStatusCondition(fs.Status.Conditions, flowv1.ConditionProjected) != nil || fs.Status.NativeName != "" ||
		!meta.IsStatusConditionTrue(fs.Status.Conditions, flowv1.ConditionStalled) {
		t.Fatalf("status without projection = %+v", fs.Status)
	}
	change, changed = nextFlowSchemaStatus(fs, objectView{status: accepted(), projection: projected("apf-f")}, true, t1)
	if !changed || change.write.first || change.write.danglingReference || fs.Status.NativeName != "apf-f" ||
		meta.FindStatusCondition(fs.Status.Conditions, flowv1.ConditionStalled) != nil {
		t.Errorf("in effect and projected: changed %v, change %+v, status %+v", changed, change, fs.Status)
	}
}
