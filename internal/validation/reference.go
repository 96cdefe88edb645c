package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// FlowSchemaAgainstPriority checks a FlowSchema spec against the spec of the RequestPriority it
// names. rp == nil means that RequestPriority does not exist (yet): that is a warning, not an
// error, because GitOps tools apply objects in any order. A flowDistinguisher is not allowed
// when the RequestPriority has the exempt level 0 or one queue per width. fldPath is the path
// of the FlowSchema's spec.
func FlowSchemaAgainstPriority(spec *v1alpha1.FlowSchemaSpec, rp *v1alpha1.RequestPrioritySpec, fldPath *field.Path) (errs field.ErrorList, warnings []string) {
	if spec == nil {
		return nil, nil
	}
	name := spec.RequestPriority.Name
	if rp == nil {
		return nil, []string{fmt.Sprintf("%s: RequestPriority %q not found: the FlowSchema matches nothing "+
			"(its requests fall through to the backstops) until it exists; create it or fix the name",
			fldPath.Child("requestPriority", "name"), name)}
	}
	if rp.PriorityLevel != v1alpha1.ExemptPriorityLevel && MastersOnly(spec.Match) {
		warnings = append(warnings, fmt.Sprintf("%s: every request this FlowSchema matches is of group %s, which the "+
			"implicit FlowSchema %q sends to the exempt level ahead of every FlowSchema: it never takes a request "+
			"and is reported as OverriddenByMastersSchema; refer to a level-0 RequestPriority or delete it",
			fldPath.Child("match"), MastersGroup, BackstopExemptName))
	}
	if spec.FlowDistinguisher == nil || AcceptsDistinguisher(rp) {
		return nil, warnings
	}
	return field.ErrorList{field.Forbidden(fldPath.Child("flowDistinguisher"), distinguisherRefusal(name, rp))}, warnings
}

// distinguisherRefusal explains why a RequestPriority takes no flow distinguisher.
func distinguisherRefusal(name string, rp *v1alpha1.RequestPrioritySpec) string {
	if rp.PriorityLevel == v1alpha1.ExemptPriorityLevel {
		return fmt.Sprintf("not allowed: RequestPriority %q has the exempt priorityLevel 0, whose requests are "+
			"never queued; remove flowDistinguisher", name)
	}
	return fmt.Sprintf("not allowed: RequestPriority %q has queuesPerWidth 1, a single queue with no flows to "+
		"tell apart; remove flowDistinguisher, or raise queuesPerWidth (with a handSize) on the RequestPriority", name)
}
