package validation_test

import (
	"testing"

	"github.com/apf-operator/apf-operator/internal/native/budget"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// TestBoundLevelChargesNoShares: a bound RequestPriority writes no level, so it takes nothing
// from the share budget, whatever shares its spec gives the in-process engine.
func TestBoundLevelChargesNoShares(t *testing.T) {
	rp := sharesRP(100, 100000)
	if got := validation.LimitedShares(rp); got != 100000 {
		t.Fatalf("unbound: LimitedShares = %d, want 100000", got)
	}
	rp.Spec.NativeLevel = "workload-high"
	if got := validation.LimitedShares(rp); got != 0 {
		t.Errorf("bound: LimitedShares = %d, want 0", got)
	}
	if errs := validation.RequestPriorityShares(nil, rp, 27, budget.New(nil, 10, 0)); len(errs) != 0 {
		t.Errorf("a bound level on a full budget is refused: %v", errs)
	}
}
