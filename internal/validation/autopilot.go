package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// autopilotBounds checks spec.autopilot of a non-exempt level: the autopilot moves shares
// between levels that have some, so assuredConcurrencyShares must be above 0, and the
// configured shares (what Git says, restored when the autopilot stops) must lie within
// [minShares, maxShares]. The ranges of the bounds and minShares <= maxShares are the
// schema's (CEL); they are checked here too so that every path says the same.
func autopilotBounds(spec *v1alpha1.RequestPrioritySpec, fldPath *field.Path) field.ErrorList {
	a := spec.Autopilot
	if a == nil {
		return nil
	}
	p := fldPath.Child("autopilot")
	errs := requiredInRange(&a.MinShares, p.Child("minShares"), 1, MaxAssuredConcurrencyShares, "")
	errs = append(errs, requiredInRange(&a.MaxShares, p.Child("maxShares"), 1, MaxAssuredConcurrencyShares, "")...)
	errs = append(errs, optionalInRange(a.MaxStepPercent, p.Child("maxStepPercent"), 1, 100)...)
	if len(errs) > 0 {
		return errs
	}
	if a.MinShares > a.MaxShares {
		return field.ErrorList{field.Invalid(p.Child("minShares"), a.MinShares, fmt.Sprintf(
			"must be at most autopilot.maxShares (%d): lower minShares or raise maxShares", a.MaxShares))}
	}
	shares := spec.AssuredConcurrencyShares
	if shares == nil || *shares < 0 || *shares > MaxAssuredConcurrencyShares {
		return nil // assuredConcurrencyShares is reported
	}
	switch {
	case *shares == 0:
		return field.ErrorList{field.Invalid(fldPath.Child("assuredConcurrencyShares"), *shares,
			"must be above 0 with autopilot (it moves shares between levels that have some): set it within "+
				"[autopilot.minShares, autopilot.maxShares], or remove autopilot")}
	case *shares < a.MinShares:
		return field.ErrorList{field.Invalid(p.Child("minShares"), a.MinShares, fmt.Sprintf(
			"must be at most assuredConcurrencyShares (%d), the configured shares the autopilot starts from and "+
				"restores: lower minShares to %d or less, or raise assuredConcurrencyShares", *shares, *shares))}
	case *shares > a.MaxShares:
		return field.ErrorList{field.Invalid(p.Child("maxShares"), a.MaxShares, fmt.Sprintf(
			"must be at least assuredConcurrencyShares (%d), the configured shares the autopilot starts from and "+
				"restores: raise maxShares to %d or more, or lower assuredConcurrencyShares", *shares, *shares))}
	}
	return nil
}
