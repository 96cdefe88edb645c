package defaults

import (
	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// EnforcementNative is the enforcement mode (the manager's --enforcement) that projects the
// configuration onto kube-apiserver; the defaults are the same in every mode.
const EnforcementNative = "native"

// Set is the set of default objects, as data. Its methods return fresh copies.
type Set struct {
	rps []rpDecl
	fss []fsDecl
}

// Default returns the defaults: the proposal's five RequestPriority and five FlowSchema
// objects, the non-top RequestPriorities bound to kube-apiserver's levels (defaults.go), for
// every enforcement mode.
func Default() Set {
	return Set{rps: requestPrioritySpecs, fss: flowSchemaSpecs}
}

// Proposal returns the defaults (Default). It names the set as the in-process modes know it.
func Proposal() Set { return Default() }

// Native returns the defaults (Default): enforcement native has the same set since issue #32.
func Native() Set { return Default() }

// For returns the defaults of an enforcement mode: Default, whatever the mode.
func For(string) Set { return Default() }

// Name is "default", for messages.
func (s Set) Name() string { return "default" }

// RequestPriorities returns fresh copies of the set's RequestPriority objects, logically
// highest first, labeled as managed by the operator and annotated for automatic spec updates.
func (s Set) RequestPriorities() []v1alpha1.RequestPriority {
	out := make([]v1alpha1.RequestPriority, 0, len(s.rps))
	for _, d := range s.rps {
		rp := v1alpha1.RequestPriority{ObjectMeta: managedMeta(d.name), Spec: *d.spec.DeepCopy()}
		if d.name == topName {
			rp.Annotations[AnnotationDefaultSet] = DefaultSetBound
		}
		rp.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("RequestPriority"))
		out = append(out, rp)
	}
	return out
}

// FlowSchemas returns fresh copies of the set's FlowSchema objects, best matching priority
// first, labeled as managed by the operator and annotated for automatic spec updates.
func (s Set) FlowSchemas() []v1alpha1.FlowSchema {
	out := make([]v1alpha1.FlowSchema, 0, len(s.fss))
	for _, d := range s.fss {
		fs := v1alpha1.FlowSchema{ObjectMeta: managedMeta(d.name), Spec: *d.spec.DeepCopy()}
		recordExemptRights(&fs)
		fs.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("FlowSchema"))
		out = append(out, fs)
	}
	return out
}

// Withheld returns, by name, the FlowSchemas among fss that native enforcement deliberately
// does not project, each with the message for its Projected=False condition (reason
// ShadowedByNative): the operator's own copies (Owned) of the defaults that would move requests
// away from the kube-apiserver FlowSchema that classifies them (fsDecl.withheld). A default the
// user took over (autoupdate "false", or no managed-by label) is the user's configuration and
// is projected like any other.
func Withheld(fss []v1alpha1.FlowSchema) map[string]string {
	out := map[string]string{}
	for i := range fss {
		if !Owned(&fss[i]) {
			continue
		}
		for _, d := range flowSchemaSpecs {
			if d.name == fss[i].Name && d.withheld != "" {
				out[d.name] = "not projected, deliberately, so that the defaults move no traffic: " + d.withheld +
					". Set annotation " + v1alpha1.AnnotationAutoUpdate + " to \"false\" to own the FlowSchema and have it projected"
			}
		}
	}
	return out
}

// Names returns the names of every default, by kind ("RequestPriority", "FlowSchema"): the
// objects whose metadata the defaults reconciler may read.
func Names() map[string]map[string]bool {
	out := map[string]map[string]bool{"RequestPriority": {}, "FlowSchema": {}}
	for _, d := range requestPrioritySpecs {
		out["RequestPriority"][d.name] = true
	}
	for _, d := range flowSchemaSpecs {
		out["FlowSchema"][d.name] = true
	}
	return out
}
