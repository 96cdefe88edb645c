package controllers

import (
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// TestAutopilotSkipsBoundLevels: a bound level is never in the autopilot's pool, so the
// autopilot never moves its native level's shares, even when its spec names autopilot.
func TestAutopilotSkipsBoundLevels(t *testing.T) {
	free, bound := pooledRP("free", 1, 10, 5, 40), pooledRP("bound", 2, 10, 5, 40)
	bound.Spec.NativeLevel = "workload-high"
	if !inPool(free) {
		t.Fatal("an unbound level with autopilot is not in the pool")
	}
	if inPool(bound) {
		t.Error("a bound level is in the autopilot's pool")
	}
	if got := poolShares([]flowv1.RequestPriority{*free, *bound}); len(got) != 1 || got["free"] != 10 {
		t.Errorf("poolShares = %v, want only free's 10", got)
	}
}
