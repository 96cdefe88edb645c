package validate

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/native"
)

// nativeFindings projects the objects onto kube-apiserver's native flow control, as the operator
// would into a cluster holding no native object of its own (native.Project with no existing
// objects; with --from-cluster, the cluster's levels) with the given --native-unmatched choice, and reports every object that cannot be
// projected exactly: ReasonNotExpressible with one finding per field, ReasonOverBudget on the
// shares (the levels past the share budget of kube-apiserver's bootstrap levels with
// maxSeatLoss, lowest priority first), ReasonPrecedenceExhausted as a finding about the
// document, a refused binding (spec.nativeLevel, bound.go). Objects that are not in effect are not reported again (validation already reported
// why), nor FlowSchemas whose RequestPriority is the one not projected.
func nativeFindings(objs []manifest.Object, maxSeatLoss int32, unmatched native.Unmatched, levels nativeLevels) []manifest.Finding {
	first := firstByName(objs)
	var rps []v1alpha1.RequestPriority
	var fss []v1alpha1.FlowSchema
	for _, o := range first {
		if o.RP != nil {
			rps = append(rps, *o.RP)
		} else if o.APF() {
			fss = append(fss, *o.FS)
		}
	}
	plan := native.Project(effective.Compute(rps, fss), levels.existing(maxSeatLoss, unmatched))
	var findings []manifest.Finding
	for _, o := range first {
		if !o.APF() {
			continue // EventRateLimit is enforced by the events webhook, not projected
		}
		kind, name := o.KindName()
		results := plan.FlowSchemaResults
		if o.RP != nil {
			results = plan.RequestPriorities
		}
		findings = append(findings, resultFindings(o, kind, name, results[name], levels)...)
	}
	return findings
}

// firstByName keeps the first object of each kind and name, in input order: later duplicates
// are already errors (see names).
func firstByName(objs []manifest.Object) []manifest.Object {
	seen := map[string]bool{}
	var out []manifest.Object
	for _, o := range objs {
		kind, name := o.KindName()
		if !seen[kind+"/"+name] {
			seen[kind+"/"+name] = true
			out = append(out, o)
		}
	}
	return out
}

// resultFindings turns one object's projection Result into findings.
func resultFindings(o manifest.Object, kind, name string, res native.Result, levels nativeLevels) []manifest.Finding {
	switch res.Reason {
	case v1alpha1.ReasonNativeLevelNotFound, v1alpha1.ReasonNativeLevelOwned, v1alpha1.ReasonExemptBindingNotAllowed:
		return levels.boundFindings(o, res)
	case v1alpha1.ReasonNotExpressible, v1alpha1.ReasonOverBudget:
		errs := res.Errors
		if len(errs) == 0 { // every NotExpressible carries its errors; keep the message if not
			errs = field.ErrorList{field.Invalid(field.NewPath("spec"), "", res.Message)}
		}
		return manifest.FieldFindings(o, errs, nil)
	case v1alpha1.ReasonPrecedenceExhausted:
		return []manifest.Finding{manifest.DocFinding(o.Doc, kind, name, "", res.Message+
			"; merge FlowSchemas, or keep some of them off natively enforced clusters")}
	}
	return nil
}
