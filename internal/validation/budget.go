package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native/budget"
)

// LimitedShares is what a RequestPriority takes from the native share budget: its
// assuredConcurrencyShares above level 0, nothing at the exempt level, for a bound level
// (spec.nativeLevel: no level is written) or for nil.
func LimitedShares(rp *v1alpha1.RequestPriority) int64 {
	if rp == nil || rp.Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel || rp.Spec.AssuredConcurrencyShares == nil ||
		Bound(&rp.Spec) {
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
