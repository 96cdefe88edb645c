package validation

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// BackstopExemptName names the implicit level-0 RequestPriority of the proposal's "Default
// Behavior": a reference to this name resolves to the exempt level while no actual
// RequestPriority has level 0. It equals effective.BackstopExemptName (a test checks it).
const BackstopExemptName = "system-top"

// backstopExemptSpec is the spec of the backstop exempt level.
var backstopExemptSpec = v1alpha1.RequestPrioritySpec{PriorityLevel: v1alpha1.ExemptPriorityLevel}

// RequestPriority validates a RequestPriority being created (old == nil) or updated, against
// the other objects: every stateless rule, the immutable priorityLevel, a level no other
// RequestPriority uses, and no referring FlowSchema left with a flowDistinguisher the new spec
// cannot take. An update that keeps a conflict that already existed (a duplicate level or a
// distinguisher stored while no webhook answered) is a warning, so that the conflicting objects
// stay editable. The error is a failure to read the other objects.
func RequestPriority(ctx context.Context, old, obj *v1alpha1.RequestPriority, others Objects) (field.ErrorList, []string, error) {
	spec := field.NewPath("spec")
	errs := RequestPrioritySpec(&obj.Spec, spec)
	stateless := len(errs) == 0
	var oldSpec *v1alpha1.RequestPrioritySpec
	if old != nil {
		oldSpec = &old.Spec
		errs = append(errs, RequestPriorityUpdate(oldSpec, &obj.Spec, spec)...)
	}
	levelErrs, warnings, err := uniqueLevel(ctx, oldSpec, obj, others, spec.Child("priorityLevel"))
	if err != nil {
		return nil, nil, err
	}
	errs = append(errs, levelErrs...)
	if !stateless {
		return errs, warnings, nil
	}
	refErrs, refWarnings, err := referringFlowSchemas(ctx, oldSpec, obj, others, spec)
	if err != nil {
		return nil, nil, err
	}
	return append(errs, refErrs...), append(warnings, refWarnings...), nil
}

// uniqueLevel rejects a level another RequestPriority already has. Only a create (or a level
// change, itself rejected as immutable) can introduce a duplicate; an update of an object that
// already shares its level gets a warning.
func uniqueLevel(ctx context.Context, old *v1alpha1.RequestPrioritySpec, obj *v1alpha1.RequestPriority, others Objects, p *field.Path) (field.ErrorList, []string, error) {
	level := obj.Spec.PriorityLevel
	if level < 0 || level > MaxPriorityLevel {
		return nil, nil, nil
	}
	atLevel, err := others.RequestPrioritiesAtLevel(ctx, level)
	if err != nil {
		return nil, nil, err
	}
	holders := otherNames(atLevel, obj.Name)
	if len(holders) == 0 {
		return nil, nil, nil
	}
	if old != nil && old.PriorityLevel == level {
		return nil, []string{fmt.Sprintf("%s: RequestPriority %s has the same level %d; the oldest keeps it and the "+
			"others are ignored: delete the duplicates or re-create them at unused levels", p, quoteAll(holders), level)}, nil
	}
	e := field.Duplicate(p, level)
	e.Detail = fmt.Sprintf("already used by RequestPriority %s; levels are unique cluster-wide: choose a level no "+
		"other RequestPriority uses", quoteAll(holders))
	return field.ErrorList{e}, nil, nil
}

// referringFlowSchemas rejects a spec that leaves a referring FlowSchema with a
// flowDistinguisher the level cannot take.
func referringFlowSchemas(ctx context.Context, old *v1alpha1.RequestPrioritySpec, obj *v1alpha1.RequestPriority, others Objects, spec *field.Path) (field.ErrorList, []string, error) {
	fss, err := others.FlowSchemasReferringTo(ctx, obj.Name)
	if err != nil || len(fss) == 0 {
		return nil, nil, err
	}
	withDistinguisher := distinguishedNames(fss)
	if len(withDistinguisher) == 0 || AcceptsDistinguisher(&obj.Spec) {
		return nil, nil, nil
	}
	p, why, fix := spec.Child("queuesPerWidth"), "queuesPerWidth 1 (a single queue)", "keep queuesPerWidth above 1"
	if obj.Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel {
		p, why, fix = spec.Child("priorityLevel"), "the exempt level 0", "use a priorityLevel above 0"
	}
	msg := fmt.Sprintf("FlowSchema %s refer(s) to this RequestPriority with a flowDistinguisher, which %s cannot take: "+
		"remove their flowDistinguisher first, or %s", quoteAll(withDistinguisher), why, fix)
	if old != nil && !AcceptsDistinguisher(old) {
		return nil, []string{p.String() + ": " + msg}, nil // the conflict predates this update
	}
	return field.ErrorList{field.Forbidden(p, msg)}, nil, nil
}

// FlowSchema validates a FlowSchema being created (old == nil) or updated, against the other
// objects: every stateless rule and the rules against the RequestPriority it names (resolved
// like the filter does: the actual object, else the backstop exempt level for
// BackstopExemptName). A missing RequestPriority is a warning. The error is a failure to read
// the other objects.
func FlowSchema(ctx context.Context, old, obj *v1alpha1.FlowSchema, others Objects) (field.ErrorList, []string, error) {
	spec := field.NewPath("spec")
	errs, warnings := FlowSchemaSpec(&obj.Spec, spec)
	if len(referenceName(obj.Spec.RequestPriority.Name, spec)) > 0 {
		return errs, warnings, nil
	}
	rp, err := ResolveRequestPriority(ctx, obj.Spec.RequestPriority.Name, others)
	if err != nil {
		return nil, nil, err
	}
	refErrs, refWarnings := FlowSchemaAgainstPriority(&obj.Spec, rp, spec)
	return append(errs, refErrs...), append(warnings, refWarnings...), nil
}

// ResolveRequestPriority returns the spec a reference to name resolves to: the actual
// RequestPriority, else the backstop exempt level when name is BackstopExemptName and no actual
// RequestPriority has level 0, else nil.
func ResolveRequestPriority(ctx context.Context, name string, others Objects) (*v1alpha1.RequestPrioritySpec, error) {
	rp, err := others.RequestPriority(ctx, name)
	if err != nil || rp != nil {
		if rp != nil {
			return &rp.Spec, nil
		}
		return nil, err
	}
	if name != BackstopExemptName {
		return nil, nil
	}
	exempt, err := others.RequestPrioritiesAtLevel(ctx, v1alpha1.ExemptPriorityLevel)
	if err != nil || len(exempt) > 0 {
		return nil, err
	}
	spec := backstopExemptSpec
	return &spec, nil
}

// distinguishedNames returns the names of the FlowSchemas that have a flow distinguisher.
func distinguishedNames(fss []*v1alpha1.FlowSchema) []string {
	var names []string
	for _, fs := range fss {
		if fs.Spec.FlowDistinguisher != nil {
			names = append(names, fs.Name)
		}
	}
	return names
}

// quoteAll renders names as "a", "b".
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
