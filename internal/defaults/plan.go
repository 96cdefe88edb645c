package defaults

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// Actions is what the operator must do to keep the defaults in place. Every slice holds
// objects ready to send: creations are fresh default objects; repairs are copies of the actual
// objects (resourceVersion included, so a concurrent change by the user makes the update fail
// rather than be overwritten) with the default spec.
//
// Creations are to be made in order, RequestPriorities before FlowSchemas. Within each kind the
// objects that end the need to create (the level-0 RequestPriority, the FlowSchema that refers
// to it) come last: an operator that stops part-way leaves the trigger in place, so the next
// one creates the rest instead of leaving an incomplete set forever.
type Actions struct {
	CreateRequestPriorities []v1alpha1.RequestPriority
	CreateFlowSchemas       []v1alpha1.FlowSchema
	RepairRequestPriorities []v1alpha1.RequestPriority
	RepairFlowSchemas       []v1alpha1.FlowSchema
	// Blocked lists managed objects whose drift no update can repair (see Blocked).
	Blocked []Blocked
}

// Blocked is a managed object with autoupdate "true" whose drift cannot be repaired by an
// update: a RequestPriority whose immutable priorityLevel differs from the default's. The
// operator never deletes, so the user must delete the object or set the annotation to "false".
type Blocked struct {
	Kind    string
	Name    string
	Message string
}

// Empty reports whether there is nothing to create or repair.
func (a Actions) Empty() bool {
	return len(a.CreateRequestPriorities) == 0 && len(a.CreateFlowSchemas) == 0 &&
		len(a.RepairRequestPriorities) == 0 && len(a.RepairFlowSchemas) == 0
}

// Plan decides, from the actual objects, which default objects to create and which managed
// objects to repair. It never modifies its arguments.
func Plan(rps []v1alpha1.RequestPriority, fss []v1alpha1.FlowSchema) Actions {
	var a Actions
	if !hasExemptLevel(rps) {
		a.CreateRequestPriorities = missingRequestPriorities(rps)
	}
	if !refersToExemptLevel(fss, rps) {
		a.CreateFlowSchemas = missingFlowSchemas(fss, exemptNames(rps))
	}
	a.RepairRequestPriorities, a.Blocked = requestPriorityRepairs(rps)
	a.RepairFlowSchemas = flowSchemaRepairs(fss)
	return a
}

// Owned reports whether the operator may change obj: it carries the managed-by label of the
// operator and the autoupdate annotation "true".
func Owned(obj metav1.Object) bool {
	return obj.GetLabels()[v1alpha1.LabelManagedBy] == v1alpha1.ManagedByValue &&
		obj.GetAnnotations()[v1alpha1.AnnotationAutoUpdate] == "true"
}

func hasExemptLevel(rps []v1alpha1.RequestPriority) bool {
	for i := range rps {
		if rps[i].Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel {
			return true
		}
	}
	return false
}

// exemptNames returns the names of the actual level-0 RequestPriority objects.
func exemptNames(rps []v1alpha1.RequestPriority) map[string]bool {
	exempt := map[string]bool{}
	for i := range rps {
		if rps[i].Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel {
			exempt[rps[i].Name] = true
		}
	}
	return exempt
}

// refersToExemptLevel reports whether some FlowSchema names an actual level-0 RequestPriority.
func refersToExemptLevel(fss []v1alpha1.FlowSchema, rps []v1alpha1.RequestPriority) bool {
	exempt := exemptNames(rps)
	for i := range fss {
		if exempt[fss[i].Spec.RequestPriority.Name] {
			return true
		}
	}
	return false
}

func missingRequestPriorities(rps []v1alpha1.RequestPriority) []v1alpha1.RequestPriority {
	inUse := make(map[string]bool, len(rps))
	for i := range rps {
		inUse[rps[i].Name] = true
	}
	var out, exempt []v1alpha1.RequestPriority
	for _, d := range RequestPriorities() {
		switch {
		case inUse[d.Name]:
		case d.Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel:
			exempt = append(exempt, d)
		default:
			out = append(out, d)
		}
	}
	return append(out, exempt...)
}

// missingFlowSchemas returns the default FlowSchemas whose names are free; those that name an
// actual level-0 RequestPriority or the default level-0 one come last. exempt (the actual
// level-0 names) is extended in place.
func missingFlowSchemas(fss []v1alpha1.FlowSchema, exempt map[string]bool) []v1alpha1.FlowSchema {
	inUse := make(map[string]bool, len(fss))
	for i := range fss {
		inUse[fss[i].Name] = true
	}
	for _, d := range RequestPriorities() {
		if d.Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel {
			exempt[d.Name] = true
		}
	}
	var out, last []v1alpha1.FlowSchema
	for _, d := range FlowSchemas() {
		switch {
		case inUse[d.Name]:
		case exempt[d.Spec.RequestPriority.Name]:
			last = append(last, d)
		default:
			out = append(out, d)
		}
	}
	return append(out, last...)
}

// requestPriorityRepairs returns the owned defaults whose spec drifted, with the default spec,
// and the owned defaults whose drift an update cannot repair.
func requestPriorityRepairs(rps []v1alpha1.RequestPriority) ([]v1alpha1.RequestPriority, []Blocked) {
	want := map[string]v1alpha1.RequestPrioritySpec{}
	for _, d := range RequestPriorities() {
		want[d.Name] = d.Spec
	}
	var repairs []v1alpha1.RequestPriority
	var blocked []Blocked
	for i := range rps {
		spec, isDefault := want[rps[i].Name]
		if !isDefault || !Owned(&rps[i]) || equality.Semantic.DeepEqual(rps[i].Spec, spec) {
			continue
		}
		if rps[i].Spec.PriorityLevel != spec.PriorityLevel {
			blocked = append(blocked, Blocked{Kind: "RequestPriority", Name: rps[i].Name, Message: fmt.Sprintf(
				"priorityLevel %d differs from the default %d and is immutable, so the operator cannot "+
					"restore the default spec: delete the object (the default returns only while no "+
					"RequestPriority has level 0) or set annotation %s to \"false\" to own it",
				rps[i].Spec.PriorityLevel, spec.PriorityLevel, v1alpha1.AnnotationAutoUpdate)})
			continue
		}
		fixed := *rps[i].DeepCopy()
		fixed.Spec = spec
		repairs = append(repairs, fixed)
	}
	return repairs, blocked
}

// flowSchemaRepairs returns the owned defaults whose spec drifted, with the default spec.
func flowSchemaRepairs(fss []v1alpha1.FlowSchema) []v1alpha1.FlowSchema {
	want := map[string]v1alpha1.FlowSchemaSpec{}
	for _, d := range FlowSchemas() {
		want[d.Name] = d.Spec
	}
	var repairs []v1alpha1.FlowSchema
	for i := range fss {
		spec, isDefault := want[fss[i].Name]
		if !isDefault || !Owned(&fss[i]) || equality.Semantic.DeepEqual(fss[i].Spec, spec) {
			continue
		}
		fixed := *fss[i].DeepCopy()
		fixed.Spec = spec
		repairs = append(repairs, fixed)
	}
	return repairs
}
