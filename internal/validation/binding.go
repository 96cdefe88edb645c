package validation

import (
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// The stateless rules of spec.nativeLevel (a bound level) and spec.sharesFrom (a carved level),
// as the CRD's CEL rules state them (api/v1alpha1/requestpriority_types.go): same fields, same
// messages. Whether the named native level exists, and the donor checks of sharesFrom, need the
// cluster and are checked elsewhere (the projection, the carving).

// requiredUnlessBound checks a queuing field that a non-exempt level needs unless it is bound
// to a native level (spec.nativeLevel).
func requiredUnlessBound(v *int32, p *field.Path, lo, hi int32, example string) field.ErrorList {
	if v == nil {
		return field.ErrorList{field.Required(p, fmt.Sprintf(
			"required when priorityLevel > 0 and no nativeLevel is named: set it (%s), or bind the level with nativeLevel", example))}
	}
	return optionalInRange(v, p, lo, hi)
}

// optionalLevelField checks a queuing field of a bound level: optional, in range when given.
func optionalLevelField(v *int32, p *field.Path, lo, hi int32, _ string) field.ErrorList {
	return optionalInRange(v, p, lo, hi)
}

// exemptLevelBindings forbids nativeLevel and sharesFrom at the exempt level 0.
func exemptLevelBindings(spec *v1alpha1.RequestPrioritySpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.NativeLevel != "" {
		errs = append(errs, field.Forbidden(fldPath.Child("nativeLevel"), "priorityLevel 0 is already bound to "+
			"kube-apiserver's exempt level: remove nativeLevel, or use a priorityLevel above 0"))
	}
	if spec.SharesFrom != "" {
		errs = append(errs, field.Forbidden(fldPath.Child("sharesFrom"),
			"priorityLevel 0 is the exempt level and takes no shares: remove sharesFrom, or use a priorityLevel above 0"))
	}
	return errs
}

// bindings checks nativeLevel and sharesFrom of a non-exempt level: their names, and the fields
// that do not go with them.
func bindings(spec *v1alpha1.RequestPrioritySpec, fldPath *field.Path) field.ErrorList {
	errs := nativeName(spec.NativeLevel, fldPath.Child("nativeLevel"))
	errs = append(errs, nativeName(spec.SharesFrom, fldPath.Child("sharesFrom"))...)
	if spec.NativeLevel != "" && spec.SharesFrom != "" {
		errs = append(errs, field.Forbidden(fldPath.Child("sharesFrom"), "a bound level adds no shares, so it takes "+
			"none from a donor: remove sharesFrom, or remove nativeLevel to define a level of its own"))
	}
	if spec.NativeLevel != "" && spec.Autopilot != nil {
		errs = append(errs, field.Forbidden(fldPath.Child("autopilot"), "the autopilot never moves a bound level's "+
			"shares (they belong to the native level): remove autopilot, or remove nativeLevel"))
	}
	if spec.SharesFrom != "" && spec.Autopilot != nil {
		errs = append(errs, field.Forbidden(fldPath.Child("autopilot"),
			"carved shares are fixed by the donor's agreement: remove autopilot, or remove sharesFrom"))
	}
	if s := spec.AssuredConcurrencyShares; spec.SharesFrom != "" && s != nil && *s == 0 {
		errs = append(errs, field.Invalid(fldPath.Child("assuredConcurrencyShares"), *s,
			"must be above 0 with sharesFrom (the shares taken from the donor): set it, or remove sharesFrom"))
	}
	return errs
}

// nativeName checks the name of a native PriorityLevelConfiguration (a DNS subdomain, as
// kube-apiserver names them); "" is an absent field.
func nativeName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return nil
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, name, "must name a native PriorityLevelConfiguration: "+
			strings.Join(msgs, "; "))}
	}
	return nil
}

// bindingUpdate checks that nativeLevel and sharesFrom are neither added, removed nor changed.
func bindingUpdate(old, spec *v1alpha1.RequestPrioritySpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ name, old, new string }{
		{"nativeLevel", old.NativeLevel, spec.NativeLevel},
		{"sharesFrom", old.SharesFrom, spec.SharesFrom},
	} {
		switch {
		case f.old == f.new:
		case f.old == "" || f.new == "":
			errs = append(errs, field.Forbidden(fldPath.Child(f.name), f.name+
				" can be neither added nor removed: delete the RequestPriority and create it again"))
		default:
			errs = append(errs, field.Invalid(fldPath.Child(f.name), f.new, f.name+
				" is immutable: delete the RequestPriority and create it again"))
		}
	}
	return errs
}

// Bound reports whether a RequestPriority spec binds a native level (spec.nativeLevel).
func Bound(spec *v1alpha1.RequestPrioritySpec) bool {
	return spec != nil && spec.NativeLevel != ""
}

// ExemptLevelName is kube-apiserver's mandatory exempt PriorityLevelConfiguration. A
// RequestPriority bound to it (nativeLevel: exempt) exempts its requests natively, so it needs
// exempt rights like level 0 (ExemptAccess).
const ExemptLevelName = "exempt"

// bindsExempt reports whether obj (or old, on update) is bound to the exempt native level.
func bindsExempt(old, obj *v1alpha1.RequestPriority) bool {
	return obj.Spec.NativeLevel == ExemptLevelName || (old != nil && old.Spec.NativeLevel == ExemptLevelName)
}

// bindExemptForbidden is ExemptAccess's error for a binding to the exempt level.
func bindExemptForbidden(user authenticationv1.UserInfo, who string) field.ErrorList {
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "nativeLevel"), fmt.Sprintf(
		"user %q may not bind a RequestPriority to kube-apiserver's exempt level: %s; bind another level "+
			"or ask a cluster administrator", user.Username, who))}
}
