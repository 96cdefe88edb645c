package validate

import (
	"context"
	"fmt"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// check decodes the documents and validates every APF object against the whole set, as if
// each were created into a cluster holding the others. It returns the findings and the decoded
// APF objects and how many documents held none (other kinds, skipped).
func check(ctx context.Context, docs []document) ([]finding, []object, int) {
	var objs []object
	var findings []finding
	skipped := 0
	for _, d := range docs {
		o, f := decode(d)
		if len(o)+len(f) == 0 {
			skipped++
		}
		objs, findings = append(objs, o...), append(findings, f...)
	}
	findings = append(findings, names(objs)...)
	set := newSet(objs)
	for _, o := range objs {
		var errs field.ErrorList
		var warnings []string
		var err error
		switch {
		case o.erl != nil:
			errs = validation.EventRateLimitSpec(&o.erl.Spec, field.NewPath("spec"))
		case o.rp != nil:
			errs, warnings, err = validation.RequestPriority(ctx, nil, o.rp, set)
		default:
			errs, warnings, err = validation.FlowSchema(ctx, nil, o.fs, set)
			warnings = append(warnings, overlapWarnings(ctx, o.fs, set, errs)...)
		}
		if err != nil { // an in-memory Set never fails; keep the finding honest if it does
			errs = append(errs, field.InternalError(nil, err))
		}
		findings = append(findings, fieldFindings(o, errs, warnings)...)
	}
	return findings, objs, skipped
}

// newSet indexes the decoded objects for the cross-object rules.
func newSet(objs []object) *validation.Set {
	var rps []*v1alpha1.RequestPriority
	var fss []*v1alpha1.FlowSchema
	for _, o := range objs {
		if o.rp != nil {
			rps = append(rps, o.rp)
		} else if o.apf() {
			fss = append(fss, o.fs)
		}
	}
	return validation.NewSet(rps, fss)
}

// names checks metadata.name: present, a valid object name, and unique per kind in the set.
func names(objs []object) []finding {
	var findings []finding
	first := map[string]object{}
	p := field.NewPath("metadata", "name")
	for _, o := range objs {
		kind, name := o.kindName()
		var e *field.Error
		if name == "" {
			e = field.Required(p, "name the object")
		} else if msgs := apimachineryvalidation.NameIsDNSSubdomain(name, false); len(msgs) > 0 {
			e = field.Invalid(p, name, msgs[0])
		} else if prev, dup := first[kind+"/"+name]; dup {
			e = field.Duplicate(p, name)
			e.Detail = fmt.Sprintf("%s %q is also defined at %s:%d; define each object once", kind, name, prev.doc.file, prev.doc.index)
		} else {
			first[kind+"/"+name] = o
		}
		if e != nil {
			findings = append(findings, fieldFindings(o, field.ErrorList{e}, nil)...)
		}
	}
	return findings
}
