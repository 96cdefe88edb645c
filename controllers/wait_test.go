package controllers

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// waitTimeout bounds every wait for the operator; the operator normally reacts in
// milliseconds, the margin is for a loaded 2-core machine.
const waitTimeout = 20 * time.Second

// eventually polls check until it returns nil, failing the test with the last error after
// waitTimeout.
func eventually(t testing.TB, check func() error) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s: %v", waitTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func getRP(t testing.TB, name string) *flowv1.RequestPriority {
	t.Helper()
	var rp flowv1.RequestPriority
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, &rp); err != nil {
		t.Fatalf("getting RequestPriority %s: %v", name, err)
	}
	return &rp
}

func getFS(t testing.TB, name string) *flowv1.FlowSchema {
	t.Helper()
	var fs flowv1.FlowSchema
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, &fs); err != nil {
		t.Fatalf("getting FlowSchema %s: %v", name, err)
	}
	return &fs
}

// readyReason returns "True/Accepted"-style text for the Ready condition, or an explanation
// of why it is not current (absent, or about an older generation).
func readyReason(conditions []metav1.Condition, generation, observed int64) string {
	c := meta.FindStatusCondition(conditions, flowv1.ConditionReady)
	switch {
	case c == nil:
		return "no Ready condition"
	case c.ObservedGeneration != generation || observed != generation:
		return "status of an older generation"
	}
	return string(c.Status) + "/" + c.Reason
}
