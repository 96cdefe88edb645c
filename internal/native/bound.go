package native

import (
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// A bound level (spec.nativeLevel) names an existing native PriorityLevelConfiguration of the
// cluster's own. Nothing is written for it and it takes no shares from the budget: FlowSchemas
// that refer to it are projected onto that level. Never a substitute: a missing level, one the
// operator writes itself, or "exempt" without a record of exempt rights leaves the
// RequestPriority, and the FlowSchemas that refer to it, not projected.

// projectBound projects a bound level: onto its native level when that level may be bound.
func (pr *projector) projectBound(p *effective.Priority) {
	target := pr.bindTargets[p.NativeLevel]
	if res, ok := pr.bindable(p, target); !ok {
		pr.report(pr.plan.RequestPriorities, p.Name, p.Backstop, res)
		return
	}
	pr.levelNames[p] = target.Name
	msg := fmt.Sprintf("bound to the existing PriorityLevelConfiguration %s: nothing is written for this "+
		"RequestPriority and no shares are charged; FlowSchemas that refer to it are projected onto %s",
		target.Name, target.Name)
	pr.report(pr.plan.RequestPriorities, p.Name, p.Backstop, Result{Projected: true, Reason: flowv1.ReasonBound,
		NativeName: target.Name, Message: withDifferences(msg, boundDifferences(p, target))})
}

// bindable reports whether p may be bound to target (nil: no such level), and why not.
func (pr *projector) bindable(p *effective.Priority, target *flowcontrolv1.PriorityLevelConfiguration) (Result, bool) {
	switch {
	case target == nil:
		return Result{Reason: flowv1.ReasonNativeLevelNotFound, Message: fmt.Sprintf(
			"not projected: spec.nativeLevel names the PriorityLevelConfiguration %q, which does not exist in the "+
				"cluster; no other level stands in for it. Create that level, or name an existing one "+
				"(kubectl get prioritylevelconfigurations)", p.NativeLevel)}, false
	case !ClusterOwned(target):
		return Result{Reason: flowv1.ReasonNativeLevelOwned, Message: fmt.Sprintf(
			"not projected: spec.nativeLevel names %q, a PriorityLevelConfiguration the operator writes itself (label "+
				"%s=%s); bind a level of the cluster's own, or refer the FlowSchemas to the RequestPriority it is "+
				"projected from", p.NativeLevel, flowv1.LabelManagedBy, flowv1.ManagedByValue)}, false
	case target.Name == ExemptLevelName && (pr.mayBindExempt == nil || !pr.mayBindExempt(p.Name)):
		return Result{Reason: flowv1.ReasonExemptBindingNotAllowed, Message: "not projected: spec.nativeLevel names " +
			"kube-apiserver's exempt level, and the projection has no record that this RequestPriority's author may " +
			"configure the exempt level; use priorityLevel 0 (which exempt rights guard) to exempt requests"}, false
	}
	return Result{}, true
}

// boundRefusal tells, for a FlowSchema's message, why a bound level was not projected; "" for
// other levels.
func (pr *projector) boundRefusal(p *effective.Priority) string {
	res, ok := pr.plan.RequestPriorities[p.Name]
	if !ok || p.NativeLevel == "" {
		return ""
	}
	switch res.Reason {
	case flowv1.ReasonNativeLevelNotFound, flowv1.ReasonNativeLevelOwned, flowv1.ReasonExemptBindingNotAllowed:
		return fmt.Sprintf(": reason %s, spec.nativeLevel %q; no other level stands in for it", res.Reason, p.NativeLevel)
	}
	return ""
}
