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
// donor's shares before carving, OriginalShares): those the share budget protects.
func UnownedLevels(plcs []flowcontrolv1.PriorityLevelConfiguration) []budget.Level {
	var out []budget.Level
	for i := range plcs {
		if !Owned(&plcs[i]) {
			out = append(out, budget.Level{Name: plcs[i].Name, Shares: OriginalShares(&plcs[i])})
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

// admit takes a level's shares from the budget, levels of higher priority first (the
// projector's order), or tells why it does not fit. A level with 0 shares always fits.
func (pr *projector) admit(p *effective.Priority) (Result, bool) {
	total := pr.shares + int64(p.Shares)
	if p.Shares <= 0 || pr.budget.Fits(total) {
		pr.shares = total
		return Result{}, true
	}
	err := field.Invalid(field.NewPath("spec", "assuredConcurrencyShares"), p.Shares, fmt.Sprintf(
		"over the native share budget: %s, and levels of higher priority already take %d; projected, "+
			"kube-apiserver's own levels would be left with %s; lower it to at most %d, lower other "+
			"RequestPriorities' shares, or raise --native-max-seat-loss-percent",
		pr.budget.Explain(), pr.shares, pr.budget.Describe(total), max(pr.budget.MaxShares-pr.shares, 0)))
	return Result{Reason: flowv1.ReasonOverBudget, Errors: field.ErrorList{err},
		Message: "not projected, so kube-apiserver does not enforce it: " + err.Error()}, false
}
