package validate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// check decodes the documents and validates every APF object against its CRD's schema and
// against the whole set, as if each were created into a cluster holding the others. It returns
// the findings and the decoded APF objects and how many documents held none (other kinds,
// skipped).
func check(ctx context.Context, docs []manifest.Document) ([]manifest.Finding, []manifest.Object, int) {
	var objs []manifest.Object
	var findings []manifest.Finding
	skipped := 0
	for _, d := range docs {
		o, f := manifest.Decode(d)
		if len(o)+len(f) == 0 && !d.CommentsOnly() {
			skipped++
		}
		objs, findings = append(objs, o...), append(findings, f...)
	}
	findings = append(findings, names(objs)...)
	schemaErrs := make([]field.ErrorList, len(objs))
	for i, o := range objs {
		errs, err := schemaErrors(ctx, o)
		if err != nil {
			errs = field.ErrorList{field.InternalError(nil, err)}
		}
		schemaErrs[i] = errs
	}
	set := newSet(objs, schemaErrs)
	for i, o := range objs {
		errs, warnings := rules(ctx, o, set)
		locateDuplicateLevels(o, objs, errs)
		findings = append(findings, manifest.FieldFindings(o, merge(schemaErrs[i], errs), warnings)...)
	}
	return findings, objs, skipped
}

// rules runs the admission webhook's rules on one object.
func rules(ctx context.Context, o manifest.Object, set *validation.Set) (field.ErrorList, []string) {
	var errs field.ErrorList
	var warnings []string
	var err error
	switch {
	case o.ERL != nil:
		errs = validation.EventRateLimitSpec(&o.ERL.Spec, field.NewPath("spec"))
	case o.RP != nil:
		errs, warnings, err = validation.RequestPriority(ctx, nil, o.RP, set)
	default:
		errs, warnings, err = validation.FlowSchema(ctx, nil, o.FS, set)
		warnings = append(warnings, overlapWarnings(ctx, o.FS, set, errs)...)
	}
	if err != nil { // an in-memory Set never fails; keep the finding honest if it does
		errs = append(errs, field.InternalError(nil, err))
	}
	return errs, warnings
}

// nameOfWrongType reports whether the object's metadata or metadata.name is written with a
// type the object cannot hold.
func nameOfWrongType(o manifest.Object) bool {
	meta, ok := o.Raw["metadata"].(map[string]any)
	if !ok {
		return o.Raw["metadata"] != nil
	}
	_, isString := meta["name"].(string)
	return meta["name"] != nil && !isString
}

// newSet indexes the decoded objects for the cross-object rules, leaving out those with a value
// of the wrong type (the API server would not hold them, and their typed form lacks the value:
// a level left 0 would clash with the exempt level).
func newSet(objs []manifest.Object, schemaErrs []field.ErrorList) *validation.Set {
	var rps []*v1alpha1.RequestPriority
	var fss []*v1alpha1.FlowSchema
	for i, o := range objs {
		if slices.ContainsFunc(schemaErrs[i], isTypeError) {
			continue
		}
		if o.RP != nil {
			rps = append(rps, o.RP)
		} else if o.APF() {
			fss = append(fss, o.FS)
		}
	}
	return validation.NewSet(rps, fss)
}

// names checks metadata.name: present, a valid object name, and unique per kind in the set.
func names(objs []manifest.Object) []manifest.Finding {
	var findings []manifest.Finding
	first := map[string]manifest.Object{}
	p := field.NewPath("metadata", "name")
	for _, o := range objs {
		kind, name := o.KindName()
		var e *field.Error
		if name == "" && nameOfWrongType(o) {
			continue // the schema check reports the value
		}
		if name == "" {
			e = field.Required(p, "name the object")
		} else if msgs := apimachineryvalidation.NameIsDNSSubdomain(name, false); len(msgs) > 0 {
			e = field.Invalid(p, name, msgs[0])
		} else if prev, dup := first[kind+"/"+name]; dup {
			e = field.Duplicate(p, name)
			at := prev.Doc.FieldPosition("metadata.name")
			e.Detail = fmt.Sprintf("%s %q is also defined at %s:%d:%d; define each object once", kind, name, prev.Doc.File, at.Line, at.Column)
		} else {
			first[kind+"/"+name] = o
		}
		if e != nil {
			findings = append(findings, manifest.FieldFindings(o, field.ErrorList{e}, nil)...)
		}
	}
	return findings
}

// locateDuplicateLevels adds to a duplicate-level error of o where the other RequestPriorities
// at its level are written (FILE:LINE:COLUMN of their spec.priorityLevel), which the webhook's
// message cannot say. Objects with a value of the wrong type are left out, as newSet leaves them.
func locateDuplicateLevels(o manifest.Object, objs []manifest.Object, errs field.ErrorList) {
	if o.RP == nil {
		return
	}
	for _, e := range errs {
		if e.Type != field.ErrorTypeDuplicate || e.Field != "spec.priorityLevel" {
			continue
		}
		var at []string
		for _, other := range objs {
			if other.RP != nil && other.RP != o.RP && other.DecodeErr == nil && other.RP.Spec.PriorityLevel == o.RP.Spec.PriorityLevel {
				p := other.Doc.FieldPosition("spec.priorityLevel")
				at = append(at, fmt.Sprintf("%q at %s:%d:%d", other.RP.Name, other.Doc.File, p.Line, p.Column))
			}
		}
		if len(at) > 0 {
			e.Detail += " (" + strings.Join(at, ", ") + ")"
		}
	}
}
