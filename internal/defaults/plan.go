package defaults

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

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
	// HandOvers lists managed objects whose drifted spec a user declared by applying a
	// manifest (see Declared): the operator marks them as the user's instead of restoring them.
	HandOvers []HandOver
	// Blocked lists managed objects whose drift the operator must not or cannot repair, and
	// unbound default RequestPriorities kept for the user's FlowSchemas (see Blocked).
	Blocked []Blocked
	// ReplaceRequestPriorities are owned defaults whose immutable nativeLevel differs from the
	// default's (created by an operator before the defaults were bound): copies of the actual
	// objects (uid and resourceVersion set), to delete only if still the version the plan saw
	// and create again at once with the default spec (Replacement). No update can bind them,
	// and left as they are, native enforcement would project them as levels of their own.
	// One that a FlowSchema other than the operator's defaults refers to is not replaced but
	// Blocked (reason ReasonReplaceBlocked): replacing it would move the user's requests.
	ReplaceRequestPriorities []v1alpha1.RequestPriority
	// MarkUpgraded, when set, is the operator's system-top as the plan saw it, left by an
	// operator that shipped system-top alone in native mode: after the creations succeed, set
	// AnnotationDefaultSet on it (only if unchanged), which ends the one-time upgrade.
	MarkUpgraded *v1alpha1.RequestPriority
}

// Object is a RequestPriority or FlowSchema as a Kubernetes client takes it.
type Object interface {
	metav1.Object
	runtime.Object
}

// HandOver is a managed object whose spec a user declared by applying a manifest that leaves
// the autoupdate annotation alone. Restoring the default would start a fight with the
// applier (a GitOps tool re-applies within seconds), so the operator instead records that the
// user took the object over: it sets the annotation to "false", which no re-apply undoes.
type HandOver struct {
	Kind string
	// Object is a copy of the actual object (generation included: the change is to apply
	// only if the spec is still the one the plan saw).
	Object Object
	// By names the applier.
	By string
}

// Blocked is a managed object with autoupdate "true" whose drift the operator leaves alone
// and reports. Reason ReasonRepairBlocked: a RequestPriority whose immutable priorityLevel
// differs from the default's (no update can repair it, and the operator never deletes), or an
// object whose applied manifest sets a spec of its own together with autoupdate "true"
// (restoring the spec or changing the annotation would fight the applier); the user must
// delete the object or set the annotation to "false" (in the manifest, for an applied one).
// Reason ReasonReplaceBlocked: an unbound default RequestPriority that FlowSchemas of the user
// refer to, kept as it is (sparedReplacements); the Message names them.
type Blocked struct {
	Kind    string
	Name    string
	Reason  string
	Message string
}

// Empty reports whether there is nothing to create, repair, hand over, replace or mark.
func (a Actions) Empty() bool {
	return len(a.CreateRequestPriorities) == 0 && len(a.CreateFlowSchemas) == 0 &&
		len(a.RepairRequestPriorities) == 0 && len(a.RepairFlowSchemas) == 0 && len(a.HandOvers) == 0 &&
		len(a.ReplaceRequestPriorities) == 0 && a.MarkUpgraded == nil
}

// Plan decides, from the actual objects, which default objects to create and which managed
// objects to repair (Default().Plan).
func Plan(rps []v1alpha1.RequestPriority, fss []v1alpha1.FlowSchema) Actions {
	return Default().Plan(rps, fss)
}

// Plan decides, from the actual objects, which of the set's default objects to create, which
// managed objects to repair, and which to replace (an owned default RequestPriority whose
// immutable nativeLevel differs from the default's, unless a user's FlowSchema refers to it).
// It never modifies its arguments.
func (s Set) Plan(rps []v1alpha1.RequestPriority, fss []v1alpha1.FlowSchema) Actions {
	var a Actions
	if !hasExemptLevel(rps) {
		a.CreateRequestPriorities = s.missingRequestPriorities(rps)
	}
	if !refersToExemptLevel(fss, rps) {
		a.CreateFlowSchemas = s.missingFlowSchemas(fss, exemptNames(rps))
	}
	s.upgradeOnce(&a, rps, fss)
	var rpDrift, fsDrift []drifted
	rpRepairs := s.requestPriorityRepairs(rps)
	a.RepairRequestPriorities, rpDrift, a.Blocked = rpRepairs.repairs, rpRepairs.declared, rpRepairs.blocked
	var kept []Blocked
	a.ReplaceRequestPriorities, kept = s.sparedReplacements(rpRepairs.replacements, fss)
	a.Blocked = append(a.Blocked, kept...)
	a.RepairFlowSchemas, fsDrift = s.flowSchemaRepairs(fss)
	for _, d := range append(rpDrift, fsDrift...) {
		if d.declared.SetsAutoUpdate {
			a.Blocked = append(a.Blocked, contested(d))
			continue
		}
		a.HandOvers = append(a.HandOvers, HandOver{Kind: d.kind, Object: d.object, By: d.declared.By})
	}
	return a
}

// drifted is a managed object whose drifted spec an applier declared.
type drifted struct {
	kind     string
	object   Object
	declared Declaration
}

func contested(d drifted) Blocked {
	return Blocked{Kind: d.kind, Name: d.object.GetName(), Reason: ReasonRepairBlocked, Message: fmt.Sprintf(
		"the spec of %s %s is applied by %s from a manifest that also sets annotation %s to \"true\": "+
			"the operator leaves the applied spec in place rather than fight the applier; set the "+
			"annotation to \"false\" in the manifest (or remove it) to own the object, or apply the default spec",
		d.kind, d.object.GetName(), d.declared.By, v1alpha1.AnnotationAutoUpdate)}
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

func (s Set) missingRequestPriorities(rps []v1alpha1.RequestPriority) []v1alpha1.RequestPriority {
	inUse := make(map[string]bool, len(rps))
	for i := range rps {
		inUse[rps[i].Name] = true
	}
	var out, exempt []v1alpha1.RequestPriority
	for _, d := range s.RequestPriorities() {
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
func (s Set) missingFlowSchemas(fss []v1alpha1.FlowSchema, exempt map[string]bool) []v1alpha1.FlowSchema {
	inUse := make(map[string]bool, len(fss))
	for i := range fss {
		inUse[fss[i].Name] = true
	}
	for _, d := range s.RequestPriorities() {
		if d.Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel {
			exempt[d.Name] = true
		}
	}
	var out, last []v1alpha1.FlowSchema
	for _, d := range s.FlowSchemas() {
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

// rpRepairs is what requestPriorityRepairs found among the owned default RequestPriorities.
type rpRepairs struct {
	repairs      []v1alpha1.RequestPriority // drifted: copies with the default spec
	declared     []drifted                  // drifted by an applier
	blocked      []Blocked                  // drifted in the immutable priorityLevel
	replacements []v1alpha1.RequestPriority // drifted in the immutable nativeLevel: copies as they are
}

// requestPriorityRepairs sorts the owned defaults whose spec drifted: repairable by an update,
// declared by an applier, blocked (priorityLevel differs) or to replace (nativeLevel differs).
func (s Set) requestPriorityRepairs(rps []v1alpha1.RequestPriority) rpRepairs {
	want := map[string]v1alpha1.RequestPrioritySpec{}
	for _, d := range s.RequestPriorities() {
		want[d.Name] = d.Spec
	}
	var out rpRepairs
	for i := range rps {
		spec, isDefault := want[rps[i].Name]
		if !isDefault || !Owned(&rps[i]) || equality.Semantic.DeepEqual(rps[i].Spec, spec) {
			continue
		}
		if decl, ok := Declared(&rps[i]); ok {
			out.declared = append(out.declared, drifted{kind: "RequestPriority", object: rps[i].DeepCopy(), declared: decl})
			continue
		}
		switch {
		case rps[i].Spec.PriorityLevel != spec.PriorityLevel:
			out.blocked = append(out.blocked, Blocked{Kind: "RequestPriority", Name: rps[i].Name, Reason: ReasonRepairBlocked, Message: fmt.Sprintf(
				"priorityLevel %d differs from the default %d and is immutable, so the operator cannot "+
					"restore the default spec: delete the object (the default returns only while no "+
					"RequestPriority has level 0) or set annotation %s to \"false\" to own it",
				rps[i].Spec.PriorityLevel, spec.PriorityLevel, v1alpha1.AnnotationAutoUpdate)})
		case rps[i].Spec.NativeLevel != spec.NativeLevel:
			out.replacements = append(out.replacements, *rps[i].DeepCopy())
		default:
			fixed := *rps[i].DeepCopy()
			fixed.Spec = spec
			out.repairs = append(out.repairs, fixed)
		}
	}
	return out
}

// Replacement returns the fresh default object that replaces old (an entry of
// Actions.ReplaceRequestPriorities), and whether there is one.
func Replacement(old *v1alpha1.RequestPriority) (v1alpha1.RequestPriority, bool) {
	return RequestPriority(old.Name)
}

// flowSchemaRepairs returns the owned defaults whose spec drifted, with the default spec, and
// the drifted ones whose spec an applier declared.
func (s Set) flowSchemaRepairs(fss []v1alpha1.FlowSchema) ([]v1alpha1.FlowSchema, []drifted) {
	want := map[string]v1alpha1.FlowSchemaSpec{}
	for _, d := range s.FlowSchemas() {
		want[d.Name] = d.Spec
	}
	var repairs []v1alpha1.FlowSchema
	var declared []drifted
	for i := range fss {
		spec, isDefault := want[fss[i].Name]
		if !isDefault || !Owned(&fss[i]) || equality.Semantic.DeepEqual(fss[i].Spec, spec) {
			continue
		}
		if decl, ok := Declared(&fss[i]); ok {
			declared = append(declared, drifted{kind: "FlowSchema", object: fss[i].DeepCopy(), declared: decl})
			continue
		}
		fixed := *fss[i].DeepCopy()
		fixed.Spec = spec
		repairs = append(repairs, fixed)
	}
	return repairs, declared
}
