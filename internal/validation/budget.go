package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native/budget"
)

// LimitedShares is what a RequestPriority takes from the native share budget: its
// assuredConcurrencyShares above level 0, nothing at the exempt level (or for nil), nothing
// for a bound level (spec.nativeLevel: no level is written) and nothing when it carves its
// shares from a donor (spec.sharesFrom: zero-sum, see CarvedShares).
func LimitedShares(rp *v1alpha1.RequestPriority) int64 {
	if rp == nil || rp.Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel || rp.Spec.AssuredConcurrencyShares == nil ||
		Bound(&rp.Spec) || rp.Spec.SharesFrom != "" {
		return 0
	}
	return int64(max(*rp.Spec.AssuredConcurrencyShares, 0))
}

// RequestPriorityShares is the share budget rule of native enforcement (package budget): the
// RequestPriorities above level 0 may hold at most b.MaxShares shares together, so that
// kube-apiserver's own levels keep their nominal seats. others is the sum of LimitedShares of
// every other RequestPriority. A create or update (old nil on create) is refused only when the
// new total is over the budget and higher than the old one: lowering shares, which is how an
// over-budget cluster is fixed, is always admitted.
func RequestPriorityShares(old, obj *v1alpha1.RequestPriority, others int64, b budget.Budget) field.ErrorList {
	total := others + LimitedShares(obj)
	if b.Fits(total) || total <= others+LimitedShares(old) {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "assuredConcurrencyShares"), *obj.Spec.AssuredConcurrencyShares,
		fmt.Sprintf("over the native share budget: %s; the other RequestPriorities hold %d, so with this one the total "+
			"would be %d and kube-apiserver's own levels would be left with %s; lower it to at most %d, lower other "+
			"RequestPriorities' shares, or raise --native-max-seat-loss-percent",
			b.Explain(), others, total, b.Describe(total), max(b.MaxShares-others, 0)))}
}

// ExplicitBorrowing is what a RequestPriority with an explicit borrowingLimitPercent asks of the
// native borrowing budget, in share-percent: its shares (LimitedShares) × borrowingLimitPercent;
// 0 when the limit is absent (the projector then gives it the default, lowered to what the
// budget leaves, so it is never refused for it).
func ExplicitBorrowing(rp *v1alpha1.RequestPriority) int64 {
	if rp == nil || rp.Spec.BorrowingLimitPercent == nil {
		return 0
	}
	return LimitedShares(rp) * int64(max(*rp.Spec.BorrowingLimitPercent, 0))
}

// RequestPriorityBorrowing is the borrowing rule of native enforcement in shares (package
// budget, borrowing.go), for admission: the explicit borrowing limits of the RequestPriorities
// together may ask at most p% of what the kept levels lend. others is the sum of
// ExplicitBorrowing of every other RequestPriority. As with shares, a change is refused only
// when the new total is over the rule and higher than the old one. The projector stays the
// authority (it also counts defaulted limits, and seats when it knows kube-apiserver's limit).
func RequestPriorityBorrowing(old, obj *v1alpha1.RequestPriority, others int64, b budget.Budget) field.ErrorList {
	asked := ExplicitBorrowing(obj)
	bw := b.Borrowing(nil)
	bw.Taken = others + asked
	if asked == 0 || bw.Fits() || bw.Taken <= others+ExplicitBorrowing(old) {
		return nil
	}
	most := (bw.Limit - others) / max(LimitedShares(obj), 1)
	fix := fmt.Sprintf("lower it to at most %d", most)
	if most < 0 {
		fix = "lower other RequestPriorities' borrowingLimitPercent"
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "borrowingLimitPercent"), *obj.Spec.BorrowingLimitPercent,
		fmt.Sprintf("over the native borrowing budget: %s; %s, lower other RequestPriorities' borrowing, or raise "+
			"--native-max-seat-loss-percent", bw.Explain(b.MaxLossPercent), fix))}
}
