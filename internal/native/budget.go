package native

import (
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native/budget"
)

// UnownedLevels are the native levels the operator does not own, with their shares (a
// donor's shares before carving, OriginalShares) and lendable percent: those the share budget
// protects.
func UnownedLevels(plcs []flowcontrolv1.PriorityLevelConfiguration) []budget.Level {
	var out []budget.Level
	for i := range plcs {
		if !Owned(&plcs[i]) {
			lvl := budget.LevelOf(&plcs[i])
			lvl.Shares = OriginalShares(&plcs[i]) // a donor's shares before carving
			out = append(out, lvl)
		}
	}
	return out
}

// shareBudget is the budget of the existing native levels (kube-apiserver's bootstrap levels
// when none is known).
func shareBudget(existing Existing) budget.Budget {
	p := ptr.Deref(existing.MaxSeatLossPercent, budget.DefaultMaxLossPercent)
	return budget.New(UnownedLevels(existing.PriorityLevels), p, existing.ServerConcurrencyLimit)
}

// admit takes a level's shares and borrowing from the budget, in the budget's order
// (budget_order.go), or tells why it does not fit. A level with 0 shares always fits (it has
// no nominal seats, so it borrows none either). A level that leaves borrowingLimitPercent
// absent gets the default, lowered to what the borrowing rule leaves (kube-apiserver rounds
// each level's borrowing up to a whole seat, so on a small server several small levels cannot
// all borrow 50 %); admitted reports the limit given.
func (pr *projector) admit(p *effective.Priority) (Result, bool) {
	total := pr.shares + int64(p.Shares)
	if p.Shares <= 0 {
		return Result{}, true
	}
	if !pr.budget.Fits(total) {
		return overBudget(field.Invalid(field.NewPath("spec", "assuredConcurrencyShares"), p.Shares, fmt.Sprintf(
			"over the native share budget: %s, and levels before it in the budget's order (projected levels first, then "+
				"by creation time) already take %d; projected, kube-apiserver's own levels would be left with %s; lower it "+
				"to at most %d, lower other RequestPriorities' shares, or raise --native-max-seat-loss-percent",
			pr.budget.Explain(), pr.shares, pr.budget.Describe(total), max(pr.budget.MaxShares-pr.shares, 0))))
	}
	asks := append(pr.asks, budget.Ask{Name: p.Name, Shares: p.Shares, BorrowingLimitPercent: borrowingLimit(p)})
	bw := pr.budget.Borrowing(asks)
	if !bw.Fits() && p.BorrowingLimitPercent == nil {
		if most := pr.budget.MaxBorrowingLimitPercent(asks, len(asks)-1); most >= 0 {
			asks[len(asks)-1].BorrowingLimitPercent = most
			bw = pr.budget.Borrowing(asks)
		}
	}
	if !bw.Fits() {
		return overBudget(pr.borrowingError(p, asks, bw))
	}
	pr.shares, pr.asks = total, asks
	return Result{}, true
}

// admittedBorrowing is the borrowing limit admit gave p (the last level it admitted).
func (pr *projector) admittedBorrowing(p *effective.Priority) int32 {
	if n := len(pr.asks); n > 0 && pr.asks[n-1].Name == p.Name && p.Shares > 0 {
		return pr.asks[n-1].BorrowingLimitPercent
	}
	return borrowingLimit(p)
}

// borrowingError tells why a level's borrowing does not fit, and the most that does.
func (pr *projector) borrowingError(p *effective.Priority, asks []budget.Ask, bw budget.Borrowing) *field.Error {
	fix := "lower its assuredConcurrencyShares, or raise --native-max-seat-loss-percent"
	if most := pr.budget.MaxBorrowingLimitPercent(asks, len(asks)-1); most >= 0 {
		fix = fmt.Sprintf("set spec.borrowingLimitPercent to at most %d, %s", most, fix)
	}
	return field.Invalid(field.NewPath("spec", "borrowingLimitPercent"), borrowingLimit(p), fmt.Sprintf(
		"over the native borrowing budget%s: %s, with the levels before it in the budget's order; %s",
		defaultedNote(p, borrowingLimit(p)), bw.Explain(pr.budget.MaxLossPercent), fix))
}

func overBudget(err *field.Error) (Result, bool) {
	return Result{Reason: flowv1.ReasonOverBudget, Errors: field.ErrorList{err},
		Message: "not projected, so kube-apiserver does not enforce it: " + err.Error()}, false
}

// borrowingLimit is the borrowingLimitPercent of p's native level: its own, or
// budget.DefaultBorrowingLimitPercent when it leaves it absent (kube-apiserver's absent is no
// limit, which the budget could not bound).
func borrowingLimit(p *effective.Priority) int32 {
	return ptr.Deref(p.BorrowingLimitPercent, budget.DefaultBorrowingLimitPercent)
}

// defaultedNote says, for messages, that p's borrowing limit given is the operator's default
// (or less, when the default did not fit).
func defaultedNote(p *effective.Priority, given int32) string {
	if p.BorrowingLimitPercent != nil {
		return ""
	}
	if given == budget.DefaultBorrowingLimitPercent {
		return fmt.Sprintf(" (spec.borrowingLimitPercent is absent, so the native level gets the operator's default %d)", given)
	}
	return fmt.Sprintf(" (spec.borrowingLimitPercent is absent, so the native level gets %d: the operator's default %d, "+
		"lowered to what the native borrowing budget leaves)", given, budget.DefaultBorrowingLimitPercent)
}
