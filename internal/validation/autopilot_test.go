package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

func TestRequestPriorityAutopilot(t *testing.T) {
	ap := specPath.Child("autopilot")
	with := func(shares int32, a v1alpha1.RequestPriorityAutopilot) *v1alpha1.RequestPrioritySpec {
		s := queued(1000)
		s.AssuredConcurrencyShares, s.Autopilot = ptr.To(shares), &a
		return &s
	}
	cases := []struct {
		name string
		spec *v1alpha1.RequestPrioritySpec
		want field.ErrorList
	}{
		{"valid bounds", with(10, v1alpha1.RequestPriorityAutopilot{MinShares: 5, MaxShares: 40}), nil},
		{"valid at both bounds", with(10, v1alpha1.RequestPriorityAutopilot{MinShares: 10, MaxShares: 10,
			MaxStepPercent: ptr.To[int32](100)}), nil},
		{"configured below minShares", with(10, v1alpha1.RequestPriorityAutopilot{MinShares: 11, MaxShares: 40}),
			field.ErrorList{field.Invalid(ap.Child("minShares"), int32(11), "lower minShares to 10 or less")}},
		{"configured above maxShares", with(50, v1alpha1.RequestPriorityAutopilot{MinShares: 5, MaxShares: 40}),
			field.ErrorList{field.Invalid(ap.Child("maxShares"), int32(40), "raise maxShares to 50 or more")}},
		{"zero shares", with(0, v1alpha1.RequestPriorityAutopilot{MinShares: 1, MaxShares: 40}),
			field.ErrorList{field.Invalid(specPath.Child("assuredConcurrencyShares"), int32(0), "must be above 0 with autopilot")}},
		{"min above max", with(10, v1alpha1.RequestPriorityAutopilot{MinShares: 30, MaxShares: 20}),
			field.ErrorList{field.Invalid(ap.Child("minShares"), int32(30), "at most autopilot.maxShares (20)")}},
		{"ranges", with(10, v1alpha1.RequestPriorityAutopilot{MinShares: 0, MaxShares: 100001,
			MaxStepPercent: ptr.To[int32](0)}), field.ErrorList{
			field.Invalid(ap.Child("minShares"), int32(0), "between 1 and 100000"),
			field.Invalid(ap.Child("maxShares"), int32(100001), "between 1 and 100000"),
			field.Invalid(ap.Child("maxStepPercent"), int32(0), "between 1 and 100"),
		}},
		{"exempt level", &v1alpha1.RequestPrioritySpec{PriorityLevel: 0,
			Autopilot: &v1alpha1.RequestPriorityAutopilot{MinShares: 1, MaxShares: 2}}, field.ErrorList{
			field.Forbidden(ap, "remove autopilot, or use a priorityLevel above 0")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			matcher.Test(t, c.want, RequestPrioritySpec(c.spec, specPath))
		})
	}
}
