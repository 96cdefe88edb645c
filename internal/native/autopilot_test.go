package native_test

import (
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native"
)

// TestAutopilotShares: the native level of a RequestPriority with applied autopilot shares
// holds them instead of its configured shares, and the share budget admits the applied ones;
// other levels keep their configured shares.
func TestAutopilotShares(t *testing.T) {
	rps := []flowv1.RequestPriority{
		withShares(requestPriority("grows", 100, 1, 0), 5),
		withShares(requestPriority("shrinks", 200, 1, 0), 15),
		withShares(requestPriority("static", 300, 1, 0), 4),
	}
	cfg := effective.Compute(rps, nil)
	plan := native.Project(cfg, native.Existing{AutopilotShares: map[string]int32{"grows": 12, "shrinks": 8}})
	got := map[string]int32{}
	for _, plc := range plan.PriorityLevels {
		got[plc.Name] = *plc.Spec.Limited.NominalConcurrencyShares
	}
	for rp, want := range map[string]int32{"grows": 12, "shrinks": 8, "static": 4} {
		if name := native.NativeName(rp); got[name] != want {
			t.Errorf("native level %s has %d shares, want %d (all: %v)", name, got[name], want, got)
		}
	}
	// The bootstrap budget is 27 shares: 5+15+4 fits, and so do the applied 12+8+4; applied
	// shares over it are refused like configured ones.
	plan = native.Project(cfg, native.Existing{AutopilotShares: map[string]int32{"grows": 25, "shrinks": 15}})
	if res := plan.RequestPriorities["shrinks"]; res.Reason != flowv1.ReasonOverBudget {
		t.Errorf("applied shares over the budget: %s (%s), want %s", res.Reason, res.Message, flowv1.ReasonOverBudget)
	}
}
