package native_test

import (
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/native"
)

// createdInOrder is Existing.Created with the names created a minute apart, in the order given.
func createdInOrder(names ...string) map[string]time.Time {
	out := map[string]time.Time{}
	for i, n := range names {
		out[n] = time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC)
	}
	return out
}

func withShares(rp flowv1.RequestPriority, shares int32) flowv1.RequestPriority {
	rp.Spec.AssuredConcurrencyShares = ptr.To(shares)
	return rp
}

// TestShareBudget: with kube-apiserver's bootstrap levels (245 shares) and the default 10%, the
// operator's levels may hold 27 shares; levels are admitted oldest first while they fit, the
// rest report OverBudget with the arithmetic, and their FlowSchemas are not projected.
func TestShareBudget(t *testing.T) {
	rps := []flowv1.RequestPriority{
		withShares(requestPriority("high", 100, 1, 0), 20),
		withShares(requestPriority("middle", 200, 1, 0), 8), // 28 > 27
		withShares(requestPriority("idle", 250, 1, 0), 0),   // takes nothing, always fits
		withShares(requestPriority("low", 300, 1, 0), 7),    // 27: fits after middle is refused
	}
	fss := []flowv1.FlowSchema{
		flowSchema("to-middle", 10, "middle", nil, apitest.And(apitest.Equals(flowv1.FieldUser, "m"))),
		flowSchema("to-low", 20, "low", nil, apitest.And(apitest.Equals(flowv1.FieldUser, "l"))),
	}
	plan := native.Project(effective.Compute(rps, fss), native.Existing{Created: createdInOrder("high", "middle", "idle", "low")})
	for name, want := range map[string]string{"high": flowv1.ReasonProjected, "middle": flowv1.ReasonOverBudget,
		"idle": flowv1.ReasonProjected, "low": flowv1.ReasonProjected} {
		if got := plan.RequestPriorities[name]; got.Reason != want || got.Projected != (want == flowv1.ReasonProjected) {
			t.Errorf("RequestPriority %s: %s (%s), want %s", name, got.Reason, got.Message, want)
		}
	}
	msg := plan.RequestPriorities["middle"].Message
	for _, want := range []string{"spec.assuredConcurrencyShares: Invalid value: 8", "floor(245×10/90) = 27", "already take 20",
		"system: 30 of 273 shares, 11.0% of the server instead of 12.2%", "at most 7", "--native-max-seat-loss-percent"} {
		if !strings.Contains(msg, want) {
			t.Errorf("OverBudget message lacks %q: %s", want, msg)
		}
	}
	if errs := plan.RequestPriorities["middle"].Errors; len(errs) != 1 || errs[0].Field != "spec.assuredConcurrencyShares" {
		t.Errorf("OverBudget errors %v, want one on spec.assuredConcurrencyShares", errs)
	}
	if got := plan.FlowSchemaResults["to-middle"].Reason; got != flowv1.ReasonRequestPriorityNotProjected {
		t.Errorf("FlowSchema to-middle: %s, want %s", got, flowv1.ReasonRequestPriorityNotProjected)
	}
	if !plan.FlowSchemaResults["to-low"].Projected {
		t.Errorf("FlowSchema to-low not projected: %+v", plan.FlowSchemaResults["to-low"])
	}
	var total int32
	for _, plc := range plan.PriorityLevels {
		total += *plc.Spec.Limited.NominalConcurrencyShares
	}
	if total != 27 {
		t.Errorf("projected levels hold %d shares, want 27", total)
	}
}

// TestShareBudgetOfTheCluster: the budget is computed from the cluster's native levels the
// operator does not own (its own levels do not count), and MaxSeatLossPercent changes it.
func TestShareBudgetOfTheCluster(t *testing.T) {
	level := func(name string, shares int32, labels map[string]string) flowcontrolv1.PriorityLevelConfiguration {
		return flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels,
			Annotations: map[string]string{flowv1.AnnotationSource: "RequestPriority/x"}},
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To(shares)}}}
	}
	existing := native.Existing{PriorityLevels: []flowcontrolv1.PriorityLevelConfiguration{
		level("system", 90, nil), level("catch-all", 0, nil),
		level("apf-x", 1000, map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue}),
	}}
	rps := []flowv1.RequestPriority{withShares(requestPriority("ten", 100, 1, 0), 10), withShares(requestPriority("one", 200, 1, 0), 1)}
	for _, c := range []struct {
		p            *int32
		ten, oneFits bool
	}{{nil, true, false}, {ptr.To[int32](9), false, true}} { // K=90: 10 shares at 10%, 8 at 9%
		existing.MaxSeatLossPercent = c.p
		existing.Created = createdInOrder("ten", "one")
		plan := native.Project(effective.Compute(rps, nil), existing)
		if got := plan.RequestPriorities["ten"].Projected; got != c.ten {
			t.Errorf("p=%v: ten projected %v, want %v: %s", ptr.Deref(c.p, 10), got, c.ten, plan.RequestPriorities["ten"].Message)
		}
		if got := plan.RequestPriorities["one"].Projected; got != c.oneFits {
			t.Errorf("p=%v: one projected %v, want %v: %s", ptr.Deref(c.p, 10), got, c.oneFits, plan.RequestPriorities["one"].Message)
		}
	}
}
