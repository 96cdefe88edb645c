package controllers

import (
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestInFlight: a FlowSchema applied after a snapshot was listed is not applied again from that
// snapshot, unless the plan changed it since; an older write, or a forgotten one, is.
func TestInFlight(t *testing.T) {
	fs := func(precedence int32) *flowcontrolv1.FlowSchema {
		return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "apf-a"},
			Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: precedence}}
	}
	f := newInFlight()
	listed := time.Now()
	f.record(fs(1000), listed.Add(time.Second))
	switch {
	case !f.pending(fs(1000), listed):
		t.Error("a write after the listing is not pending")
	case f.pending(fs(2000), listed):
		t.Error("a write of another precedence counts as the desired one")
	case f.pending(fs(1000), listed.Add(2*time.Second)):
		t.Error("a write before the listing is pending")
	}
	f.forget("apf-a")
	if f.pending(fs(1000), listed) {
		t.Error("a forgotten write is pending")
	}
}
