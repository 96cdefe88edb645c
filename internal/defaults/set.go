package defaults

import (
	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// EnforcementNative is the enforcement mode (the manager's --enforcement) whose defaults are
// the native set; every other mode takes the proposal's.
const EnforcementNative = "native"

// Set is one set of default objects, as data. Its methods return fresh copies.
type Set struct {
	name string
	rps  []rpDecl
	fss  []fsDecl
}

// Proposal returns the proposal's defaults (five RequestPriority and five FlowSchema objects),
// for enforcement none and the in-process filter.
func Proposal() Set {
	return Set{name: "proposal", rps: requestPrioritySpecs, fss: flowSchemaSpecs}
}

// Native returns the defaults for enforcement native: RequestPriority and FlowSchema
// system-top only, so that every other request keeps kube-apiserver's own classification.
func Native() Set {
	return Set{name: EnforcementNative, rps: nativeRequestPriorities, fss: nativeFlowSchemas}
}

// For returns the defaults of an enforcement mode: Native for "native", else Proposal.
func For(enforcement string) Set {
	if enforcement == EnforcementNative {
		return Native()
	}
	return Proposal()
}

// others returns the set whose defaults an operator of s retires (the other one).
func (s Set) others() Set {
	if s.name == EnforcementNative {
		return Proposal()
	}
	return Native()
}

// Name is "native" or "proposal", for messages.
func (s Set) Name() string { return s.name }

// RequestPriorities returns fresh copies of the set's RequestPriority objects, logically
// highest first, labeled as managed by the operator and annotated for automatic spec updates.
func (s Set) RequestPriorities() []v1alpha1.RequestPriority {
	out := make([]v1alpha1.RequestPriority, 0, len(s.rps))
	for _, d := range s.rps {
		rp := v1alpha1.RequestPriority{ObjectMeta: managedMeta(d.name), Spec: *d.spec.DeepCopy()}
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

// rpNames and fsNames return the set's names of each kind.
func (s Set) rpNames() map[string]bool {
	out := make(map[string]bool, len(s.rps))
	for _, d := range s.rps {
		out[d.name] = true
	}
	return out
}

func (s Set) fsNames() map[string]bool {
	out := make(map[string]bool, len(s.fss))
	for _, d := range s.fss {
		out[d.name] = true
	}
	return out
}

// Names returns the names of every default of either set, by kind ("RequestPriority",
// "FlowSchema"): the objects whose metadata the defaults reconciler may read.
func Names() map[string]map[string]bool {
	out := map[string]map[string]bool{"RequestPriority": {}, "FlowSchema": {}}
	for _, s := range []Set{Proposal(), Native()} {
		for n := range s.rpNames() {
			out["RequestPriority"][n] = true
		}
		for n := range s.fsNames() {
			out["FlowSchema"][n] = true
		}
	}
	return out
}
