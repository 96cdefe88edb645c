package defaults

import (
	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// AnnotationDefaultSet marks the operator's own RequestPriority system-top with the default
// set it belongs to. An owned system-top without it was created by an operator that shipped
// system-top alone in native mode: the upgrade creates the other defaults once (upgradeOnce),
// then marks it.
const AnnotationDefaultSet = "flowcontrol.apf-operator.io/default-set"

// DefaultSetBound is AnnotationDefaultSet's value for the set of five and five with bound levels.
const DefaultSetBound = "five-bound"

// upgradeTarget returns the owned RequestPriority system-top that lacks the marker (a copy,
// resourceVersion included), or nil. Only the operator's own system-top counts: a user's is no
// trace of an earlier operator.
func upgradeTarget(rps []v1alpha1.RequestPriority) *v1alpha1.RequestPriority {
	for i := range rps {
		if rps[i].Name == topName && Owned(&rps[i]) && rps[i].Annotations[AnnotationDefaultSet] != DefaultSetBound {
			return rps[i].DeepCopy()
		}
	}
	return nil
}

// topName is the name of the level-0 default, the one that carries the marker.
const topName = "system-top"

// upgradeOnce adds to a the creations of the upgrade from a system-top-only install: every
// default whose name is not in use, despite the level-0 RequestPriority (system-top itself)
// that would otherwise stop creation, and the marking of system-top after them. The seed's
// rule holds again once system-top is marked.
func (s Set) upgradeOnce(a *Actions, rps []v1alpha1.RequestPriority, fss []v1alpha1.FlowSchema) {
	target := upgradeTarget(rps)
	if target == nil {
		return
	}
	if a.CreateRequestPriorities == nil {
		a.CreateRequestPriorities = s.missingRequestPriorities(rps)
	}
	if a.CreateFlowSchemas == nil {
		a.CreateFlowSchemas = s.missingFlowSchemas(fss, exemptNames(rps))
	}
	a.MarkUpgraded = target
}
