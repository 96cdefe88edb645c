package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// EventRateLimitSpec checks an EventRateLimit spec with seed 001's rules: at least one limit,
// each type at most once and one of the four types, qps and burst positive, cacheSize not
// negative. The CRD carries the same rules (CEL with fieldPath, the enum and the list-map key),
// so they hold while no webhook answers. fldPath is the path of the spec.
func EventRateLimitSpec(spec *v1alpha1.EventRateLimitSpec, fldPath *field.Path) field.ErrorList {
	limitsPath := fldPath.Child("limits")
	if spec == nil || len(spec.Limits) == 0 {
		return field.ErrorList{field.Required(limitsPath,
			"at least one limit is required: add one, for example {type: Server, qps: 100, burst: 1000}")}
	}
	var errs field.ErrorList
	seen := sets.New[v1alpha1.EventRateLimitType]()
	for i := range spec.Limits {
		l := &spec.Limits[i]
		p := limitsPath.Index(i)
		if seen.Has(l.Type) {
			errs = append(errs, field.Duplicate(p.Child("type"), l.Type))
		}
		seen.Insert(l.Type)
		errs = append(errs, eventRateLimit(l, p)...)
	}
	return errs
}

// eventRateLimit checks one limit.
func eventRateLimit(l *v1alpha1.EventRateLimitLimit, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !isEventRateLimitType(l.Type) {
		errs = append(errs, field.NotSupported(p.Child("type"), l.Type, v1alpha1.EventRateLimitTypes))
	}
	if l.QPS <= 0 {
		errs = append(errs, field.Invalid(p.Child("qps"), l.QPS,
			"must be positive: set the events per second each bucket refills, for example 10"))
	}
	if l.Burst <= 0 {
		errs = append(errs, field.Invalid(p.Child("burst"), l.Burst,
			"must be positive: set the most events a full bucket admits at once, for example 100"))
	}
	if l.CacheSize != nil && *l.CacheSize < 0 {
		errs = append(errs, field.Invalid(p.Child("cacheSize"), *l.CacheSize, fmt.Sprintf(
			"must not be negative: set the number of buckets to keep, or 0 for the default %d",
			v1alpha1.DefaultEventRateLimitCacheSize)))
	}
	return errs
}

func isEventRateLimitType(t v1alpha1.EventRateLimitType) bool {
	for _, known := range v1alpha1.EventRateLimitTypes {
		if t == known {
			return true
		}
	}
	return false
}
