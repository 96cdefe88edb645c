package validation

import (
	"fmt"
	"math/big"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/shufflesharding"
)

// RequestPrioritySpec checks a RequestPriority spec on its own: the level's range, the queuing
// fields a level takes (none at the exempt level 0; shares, queuesPerWidth and
// queueLengthLimit above it), handSize (required iff queuesPerWidth > 1) and the shuffle
// sharding limit ff(queuesPerWidth, handSize) < 2^60. fldPath is the path of the spec.
func RequestPrioritySpec(spec *v1alpha1.RequestPrioritySpec, fldPath *field.Path) field.ErrorList {
	if spec == nil {
		return field.ErrorList{field.Required(fldPath, "spec is required: set at least priorityLevel")}
	}
	levelPath := fldPath.Child("priorityLevel")
	if spec.PriorityLevel < 0 || spec.PriorityLevel > MaxPriorityLevel {
		return field.ErrorList{field.Invalid(levelPath, spec.PriorityLevel,
			fmt.Sprintf("must be between 0 (the exempt level) and %d", MaxPriorityLevel))}
	}
	if spec.PriorityLevel == v1alpha1.ExemptPriorityLevel {
		return exemptLevelFields(spec, fldPath)
	}
	return queuingFields(spec, fldPath)
}

// exemptLevelFields forbids the queuing fields at level 0.
func exemptLevelFields(spec *v1alpha1.RequestPrioritySpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"assuredConcurrencyShares", spec.AssuredConcurrencyShares != nil},
		{"queuesPerWidth", spec.QueuesPerWidth != nil},
		{"handSize", spec.HandSize != nil},
		{"queueLengthLimit", spec.QueueLengthLimit != nil},
		{"lendablePercent", spec.LendablePercent != nil},
		{"borrowingLimitPercent", spec.BorrowingLimitPercent != nil},
		{"autopilot", spec.Autopilot != nil},
	} {
		if f.set {
			errs = append(errs, field.Forbidden(fldPath.Child(f.name), fmt.Sprintf(
				"priorityLevel 0 is the exempt level and takes no queuing or borrowing fields: remove %s, or use a priorityLevel above 0", f.name)))
		}
	}
	return append(errs, exemptLevelBindings(spec, fldPath)...)
}

// queuingFields checks the queuing fields of a non-exempt level.
func queuingFields(spec *v1alpha1.RequestPrioritySpec, fldPath *field.Path) field.ErrorList {
	levelField := requiredUnlessBound
	if spec.NativeLevel != "" {
		levelField = optionalLevelField
	}
	var errs field.ErrorList
	errs = append(errs, levelField(spec.AssuredConcurrencyShares, fldPath.Child("assuredConcurrencyShares"),
		0, MaxAssuredConcurrencyShares, "for example 10")...)
	errs = append(errs, levelField(spec.QueuesPerWidth, fldPath.Child("queuesPerWidth"),
		1, MaxQueuesPerWidth, "for example 64, with a handSize")...)
	errs = append(errs, levelField(spec.QueueLengthLimit, fldPath.Child("queueLengthLimit"),
		1, MaxQueueLengthLimit, "for example 50")...)
	errs = append(errs, optionalInRange(spec.LendablePercent, fldPath.Child("lendablePercent"), 0, MaxLendablePercent)...)
	errs = append(errs, optionalInRange(spec.BorrowingLimitPercent, fldPath.Child("borrowingLimitPercent"),
		0, MaxBorrowingLimitPercent)...)
	errs = append(errs, handSize(spec, fldPath)...)
	errs = append(errs, bindings(spec, fldPath)...)
	return append(errs, autopilotBounds(spec, fldPath)...)
}

// optionalInRange checks a field that may be absent.
func optionalInRange(v *int32, p *field.Path, lo, hi int32) field.ErrorList {
	if v == nil || (*v >= lo && *v <= hi) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, *v, fmt.Sprintf("must be between %d and %d", lo, hi))}
}

// requiredInRange checks a field that a non-exempt level requires.
func requiredInRange(v *int32, p *field.Path, lo, hi int32, example string) field.ErrorList {
	if v == nil {
		return field.ErrorList{field.Required(p, fmt.Sprintf("required when priorityLevel > 0: set it (%s)", example))}
	}
	if *v < lo || *v > hi {
		return field.ErrorList{field.Invalid(p, *v, fmt.Sprintf("must be between %d and %d", lo, hi))}
	}
	return nil
}

// handSize checks handSize against queuesPerWidth, including the falling-factorial limit that
// the shuffle sharder enforces at run time.
func handSize(spec *v1alpha1.RequestPrioritySpec, fldPath *field.Path) field.ErrorList {
	p := fldPath.Child("handSize")
	q, h := spec.QueuesPerWidth, spec.HandSize
	if q == nil && h != nil {
		return field.ErrorList{field.Forbidden(p,
			"allowed only when queuesPerWidth > 1 (one queue has no hand to deal): remove handSize or raise queuesPerWidth")}
	}
	if q == nil || *q < 1 || *q > MaxQueuesPerWidth {
		return nil // queuesPerWidth is reported; handSize cannot be judged without it
	}
	switch {
	case *q > 1 && h == nil:
		return field.ErrorList{field.Required(p,
			"required when queuesPerWidth > 1: set it (for example 6), or set queuesPerWidth to 1")}
	case *q == 1 && h != nil:
		return field.ErrorList{field.Forbidden(p,
			"allowed only when queuesPerWidth > 1 (one queue has no hand to deal): remove handSize or raise queuesPerWidth")}
	case h == nil:
		return nil
	case *h < 1 || *h > shufflesharding.MaxHandSize:
		return field.ErrorList{field.Invalid(p, *h, fmt.Sprintf("must be between 1 and %d", shufflesharding.MaxHandSize))}
	case *h > *q:
		return field.ErrorList{field.Invalid(p, *h, fmt.Sprintf(
			"must not exceed queuesPerWidth (%d): lower handSize or raise queuesPerWidth", *q))}
	}
	if err := shufflesharding.ValidateHandSize(int(*q), int(*h)); err != nil {
		return field.ErrorList{field.Invalid(p, *h, handSizeLimitMessage(int(*q), int(*h)))}
	}
	return nil
}

// handSizeLimitMessage explains a hand size over the shuffle-sharding limit with the exact
// falling factorial (computed in big integers, since it may exceed 64 bits) and the largest
// hand size the queues allow.
func handSizeLimitMessage(queues, hand int) string {
	ff := big.NewInt(1)
	for i := 0; i < hand; i++ {
		ff.Mul(ff, big.NewInt(int64(queues-i)))
	}
	largest := 0
	for h := 1; h <= hand; h++ {
		if _, ok := shufflesharding.FallingFactorial(queues, h); !ok {
			break
		}
		largest = h
	}
	return fmt.Sprintf("ff(queuesPerWidth=%d, handSize=%d) = %s >= 2^60 = %d; lower handSize (at most %d with "+
		"queuesPerWidth %d) or queuesPerWidth", queues, hand, ff, shufflesharding.MaxFallingFactorial, largest, queues)
}

// AcceptsDistinguisher reports whether FlowSchemas referring to a RequestPriority with this
// spec may have a flowDistinguisher: not at the exempt level (never queued) and not with a
// single queue per width (nothing to distinguish). A bound level that leaves queuesPerWidth to
// its native level accepts one.
func AcceptsDistinguisher(spec *v1alpha1.RequestPrioritySpec) bool {
	if spec.PriorityLevel == v1alpha1.ExemptPriorityLevel {
		return false
	}
	if Bound(spec) && spec.QueuesPerWidth == nil {
		return true // the native level's queues decide; kube-apiserver takes a distinguisher at any limited level
	}
	return spec.QueuesPerWidth != nil && *spec.QueuesPerWidth > 1
}

// RequestPriorityUpdate checks an update of a RequestPriority spec against the stored one:
// priorityLevel is immutable (like the value of a PriorityClass), and so are nativeLevel and
// sharesFrom, which can be neither added nor removed either.
func RequestPriorityUpdate(old, spec *v1alpha1.RequestPrioritySpec, fldPath *field.Path) field.ErrorList {
	if old == nil || spec == nil {
		return nil
	}
	errs := bindingUpdate(old, spec, fldPath)
	if old.PriorityLevel == spec.PriorityLevel {
		return errs
	}
	return append(errs, field.Invalid(fldPath.Child("priorityLevel"), spec.PriorityLevel, fmt.Sprintf(
		"priorityLevel is immutable (it is %d): delete the RequestPriority and create it again with the new level",
		old.PriorityLevel)))
}
