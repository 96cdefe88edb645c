package controllers

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
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
