package native_test

import (
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// projectedNames are the RequestPriorities plan projects.
func projectedNames(plan *native.Plan) map[string]bool {
	out := map[string]bool{}
	for name, r := range plan.RequestPriorities {
		if r.Projected {
			out[name] = true
		}
	}
	return out
}

// TestBudgetOrderIsCreationTime: of two levels that do not both fit the 27 shares, the older
// one is projected, whatever their priorityLevel; at equal creation times the name decides.
func TestBudgetOrderIsCreationTime(t *testing.T) {
	rps := []flowv1.RequestPriority{
		withShares(requestPriority("urgent", 100, 1, 0), 20), // the higher priority, created second
		withShares(requestPriority("early", 900, 1, 0), 20),
	}
	plan := native.Project(effective.Compute(rps, nil), native.Existing{Created: createdInOrder("early", "urgent")})
	if got := projectedNames(plan); !got["early"] || got["urgent"] {
		t.Fatalf("projected %v, want early (older) only", got)
	}
	if r := plan.RequestPriorities["urgent"]; r.Reason != flowv1.ReasonOverBudget || !strings.Contains(r.Message, "already take 20") {
		t.Errorf("urgent: %s: %s", r.Reason, r.Message)
	}
	plan = native.Project(effective.Compute(rps, nil), native.Existing{}) // no creation times: by name
	if got := projectedNames(plan); !got["early"] || got["urgent"] {
		t.Errorf("without creation times projected %v, want early (first by name)", got)
	}
}

// TestBudgetOrderKeepsProjectedLevels: a level whose native level exists keeps its place
// against an older RequestPriority that does not fit beside it (one stored while the webhook
// was down), and projecting the plan again changes nothing.
func TestBudgetOrderKeepsProjectedLevels(t *testing.T) {
	projectedFirst := []flowv1.RequestPriority{withShares(requestPriority("tenant", 500, 1, 0), 20)}
	existing := native.Existing{PriorityLevels: native.Project(effective.Compute(projectedFirst, nil), native.Existing{}).PriorityLevels}
	if len(existing.PriorityLevels) != 1 {
		t.Fatalf("first plan: %d levels, want 1", len(existing.PriorityLevels))
	}
	rps := append(projectedFirst, withShares(requestPriority("older", 100, 1, 0), 20))
	existing.Created = createdInOrder("older", "tenant")
	for round := range 3 {
		plan := native.Project(effective.Compute(rps, nil), existing)
		if got := projectedNames(plan); !got["tenant"] || got["older"] {
			t.Fatalf("round %d: projected %v, want the projected tenant only", round, got)
		}
		if len(plan.StalePriorityLevels) != 0 {
			t.Fatalf("round %d: deletes %v", round, plan.StalePriorityLevels)
		}
		existing.PriorityLevels = plan.PriorityLevels
	}
	// When the budget shrinks below both, the newest projected level goes first.
	three := withShares(requestPriority("third", 700, 1, 0), 5)
	both := append(rps[:1:1], three)
	existing.Created = createdInOrder("tenant", "third")
	plan := native.Project(effective.Compute(both, nil), existing)
	existing.PriorityLevels = plan.PriorityLevels
	existing.MaxSeatLossPercent = ptr.To[int32](9) // 24 shares: 20 + 5 no longer fit
	plan = native.Project(effective.Compute(both, nil), existing)
	if got := projectedNames(plan); !got["tenant"] || got["third"] {
		t.Errorf("shrunk budget: projected %v, want tenant (the older projected level)", got)
	}
}

// TestDefaultBorrowingLimit: a level whose spec leaves borrowingLimitPercent out gets the
// operator's default on its native level, and its status says so; an explicit value is kept.
func TestDefaultBorrowingLimit(t *testing.T) {
	explicit := withShares(requestPriority("explicit", 200, 1, 0), 5)
	explicit.Spec.BorrowingLimitPercent = ptr.To[int32](0)
	rps := []flowv1.RequestPriority{withShares(requestPriority("absent", 100, 1, 0), 5), explicit}
	plan := native.Project(effective.Compute(rps, nil), native.Existing{})
	limits := map[string]*int32{}
	for _, plc := range plan.PriorityLevels {
		limits[plc.Annotations[flowv1.AnnotationSource]] = plc.Spec.Limited.BorrowingLimitPercent
	}
	if got := ptr.Deref(limits["RequestPriority/absent"], -1); got != 50 {
		t.Errorf("absent: native borrowingLimitPercent %d, want the default 50", got)
	}
	if got := ptr.Deref(limits["RequestPriority/explicit"], -1); got != 0 {
		t.Errorf("explicit: native borrowingLimitPercent %d, want 0", got)
	}
	if msg := plan.RequestPriorities["absent"].Message; !strings.Contains(msg, "spec.borrowingLimitPercent is absent, so the native level gets the operator's default 50") {
		t.Errorf("absent: message does not say the limit was defaulted: %s", msg)
	}
	if msg := plan.RequestPriorities["explicit"].Message; strings.Contains(msg, "default") {
		t.Errorf("explicit: message speaks of a default: %s", msg)
	}
}

// TestBorrowingBudget: kube-apiserver's suggested levels lend 13990 share-percent (Σ shares ×
// lendablePercent), so at p = 10 the operator's levels may borrow 1399: 27 shares at 51% fit,
// at 52% they do not (OverBudget on spec.borrowingLimitPercent, with the most that fits). With
// SCL 600 the rule is in seats: the kept levels lend 311 seats with 27 more shares, so at most 31
// may be borrowed: round(60 × 52%) = 31 fits, round(60 × 53%) = 32 does not. Kept levels that
// lend nothing cannot be borrowed from: no bound.
func TestBorrowingBudget(t *testing.T) {
	level := func(limit int32) []flowv1.RequestPriority {
		rp := withShares(requestPriority("tenant", 100, 1, 0), 27)
		rp.Spec.BorrowingLimitPercent = ptr.To(limit)
		return []flowv1.RequestPriority{rp}
	}
	stock := bootstrapset.PriorityLevels()
	for _, c := range []struct {
		scl     int64
		limit   int32
		fits    bool
		message string
	}{
		{0, 51, true, ""},
		{0, 52, false, "floor(10×13990/100) = 1399 share-percent (Σ shares × borrowingLimitPercent), and would borrow 1404, with the levels before it in the budget's order; set spec.borrowingLimitPercent to at most 51"},
		{600, 52, true, ""},
		{600, 53, false, "lend 311 seats (Σ round(nominal seats × lendablePercent / 100)); the operator's levels may borrow at most 10%% of them, floor(10×311/100) = 31 seats"},
	} {
		plan := native.Project(effective.Compute(level(c.limit), nil), native.Existing{PriorityLevels: stock, ServerConcurrencyLimit: c.scl})
		r := plan.RequestPriorities["tenant"]
		if r.Projected != c.fits {
			t.Errorf("SCL %d, limit %d: projected %v, want %v: %s", c.scl, c.limit, r.Projected, c.fits, r.Message)
			continue
		}
		if !c.fits && (len(r.Errors) != 1 || r.Errors[0].Field != "spec.borrowingLimitPercent" ||
			!strings.Contains(r.Message, strings.ReplaceAll(c.message, "%%", "%"))) {
			t.Errorf("SCL %d, limit %d: errors %v, message %s", c.scl, c.limit, r.Errors, r.Message)
		}
	}
	lendNothing := []flowcontrolv1.PriorityLevelConfiguration{{ObjectMeta: metav1.ObjectMeta{Name: "system"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](300)}}}}
	plan := native.Project(effective.Compute(level(1000), nil), native.Existing{PriorityLevels: lendNothing})
	if r := plan.RequestPriorities["tenant"]; !r.Projected && r.Errors[0].Field == "spec.borrowingLimitPercent" {
		t.Errorf("kept levels lend nothing, yet borrowing is refused: %s", r.Message)
	}
}

// TestDefaultBorrowingLowered: on a small server (SCL 90) twelve levels of one share each, all
// leaving borrowingLimitPercent out, are all projected (12 shares is the budget), but each
// rounds its borrowing to a whole seat (round(1 × 50 / 100) = 1), so the default 50 is lowered for those past
// what the kept levels' lendable seats allow; the result passes the borrowing rule, and the
// status says what each got.
func TestDefaultBorrowingLowered(t *testing.T) {
	var rps []flowv1.RequestPriority
	var names []string
	for i := range 12 {
		name := string(rune('a' + i))
		rps = append(rps, withShares(requestPriority(name, int32(100+i), 1, 0), 1))
		names = append(names, name)
	}
	plan := native.Project(effective.Compute(rps, nil), native.Existing{PriorityLevels: bootstrapset.PriorityLevels(),
		ServerConcurrencyLimit: 90, Created: createdInOrder(names...)})
	if got := projectedNames(plan); len(got) != 12 {
		t.Fatalf("projected %d of 12: %v", len(got), got)
	}
	borrowing := map[int32]int{}
	for _, plc := range plan.PriorityLevels {
		borrowing[ptr.Deref(plc.Spec.Limited.BorrowingLimitPercent, -1)]++
	}
	// A level of one nominal seat borrows round(1 × 49 / 100) = 0 seats: 49 is the most that fits.
	if borrowing[50] == 0 || borrowing[50] == 12 || borrowing[50]+borrowing[49] != 12 {
		t.Errorf("borrowing limits %v, want some at the default 50 and the rest lowered to 49", borrowing)
	}
	if msg := plan.RequestPriorities["l"].Message; !strings.Contains(msg, "gets 49: the operator's default 50, lowered") {
		t.Errorf("the last level's status does not say its limit was lowered: %s", msg)
	}
	if msg := plan.RequestPriorities["a"].Message; !strings.Contains(msg, "gets the operator's default 50") {
		t.Errorf("the first level's status: %s", msg)
	}
}
