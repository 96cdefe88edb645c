package defaults

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// TestNativeSetIsSystemTopOnly checks the defaults of enforcement native: system-top alone,
// level 0 (so it projects onto kube-apiserver's exempt and takes no seats), valid, in effect,
// and identical to the proposal's system-top (an upgrade keeps it).
func TestNativeSetIsSystemTopOnly(t *testing.T) {
	set := For("native")
	rps, fss := set.RequestPriorities(), set.FlowSchemas()
	check(t, "native RequestPriorities", rpNames(rps), []string{"system-top"})
	check(t, "native FlowSchemas", fsNames(fss), []string{"system-top"})
	if rps[0].Spec.PriorityLevel != v1alpha1.ExemptPriorityLevel {
		t.Errorf("system-top level %d, want 0", rps[0].Spec.PriorityLevel)
	}
	if errs := validation.RequestPrioritySpec(&rps[0].Spec, field.NewPath("spec")); len(errs) > 0 {
		t.Errorf("RequestPriority system-top: %v", errs)
	}
	if errs, warnings := validation.FlowSchemaSpec(&fss[0].Spec, field.NewPath("spec")); len(errs)+len(warnings) > 0 {
		t.Errorf("FlowSchema system-top: %v %v", errs, warnings)
	}
	cfg := effective.Compute(rps, fss)
	if st := cfg.FlowSchemaStatus["system-top"]; !st.InEffect {
		t.Errorf("FlowSchema system-top not in effect: %+v", st)
	}
	if Proposal().RequestPriorities()[0].Spec.PriorityLevel != 0 || Proposal().FlowSchemas()[0].Name != "system-top" ||
		Proposal().FlowSchemas()[0].Spec.MatchingPriority != fss[0].Spec.MatchingPriority {
		t.Error("the proposal's system-top differs from the native one")
	}
	if For("none").Name() != "proposal" || For("").Name() != "proposal" || For("native").Name() != "native" {
		t.Error("For picks the wrong set")
	}
	names := Names()
	if len(names["RequestPriority"]) != 5 || len(names["FlowSchema"]) != 5 {
		t.Errorf("Names() = %v, want the five of each kind", names)
	}
}

// TestNativePlan checks creation with the native set on an empty cluster and on a cluster
// whose level 0 is taken.
func TestNativePlan(t *testing.T) {
	a := Native().Plan(nil, nil)
	check(t, "create RequestPriority", rpNames(a.CreateRequestPriorities), []string{"system-top"})
	check(t, "create FlowSchema", fsNames(a.CreateFlowSchemas), []string{"system-top"})
	a = Native().Plan(Native().RequestPriorities(), Native().FlowSchemas())
	if !a.Empty() {
		t.Errorf("native defaults in place: %+v", a)
	}
}

// TestRetire checks the upgrade from the proposal's defaults to the native ones: owned
// objects named only by the proposal are retired, FlowSchemas first; an object the user owns
// (annotation "false" or absent, no label) is kept, and so is a RequestPriority a kept
// FlowSchema refers to. The proposal set retires nothing (the native names are a subset).
// appliedSpec marks an object's spec as declared by Argo CD's server-side apply.
func appliedSpec(m *metav1.ObjectMeta) {
	m.ManagedFields = []metav1.ManagedFieldsEntry{managed("argocd-controller", metav1.ManagedFieldsOperationApply,
		`{"f:spec":{"f:matchingPriority":{}}}`)}
}

func TestRetire(t *testing.T) {
	retiredAll := []string{"system-high", "system-low", "workload-high", "workload-low"}
	for _, tc := range []struct {
		name           string
		rps            []v1alpha1.RequestPriority
		fss            []v1alpha1.FlowSchema
		wantFS, wantRP []string
	}{
		{name: "every proposal default in place", rps: existingRPs(), fss: existingFSs(),
			wantFS: retiredAll, wantRP: retiredAll},
		{name: "the user owns some", rps: driftedRPs("system-low", annotate("false")),
			fss: driftedFSs("workload-high", unlabel),
			// FlowSchema workload-high is the user's, so RequestPriority workload-high stays.
			wantFS: []string{"system-high", "system-low", "workload-low"}, wantRP: []string{"system-high", "workload-low"}},
		{name: "annotation absent", rps: driftedRPs("workload-low", unannotate), fss: existingFSs(),
			wantFS: retiredAll, wantRP: []string{"system-high", "system-low", "workload-high"}},
		{name: "a user FlowSchema refers to a retired default", rps: existingRPs(),
			fss:    append(existingFSs(), userFS("mine", "system-low")),
			wantFS: retiredAll, wantRP: []string{"system-high", "workload-high", "workload-low"}},
		{name: "declared by an applier (a GitOps tool keeps it in Git)", rps: driftedRPs("workload-low", appliedSpec),
			fss:    driftedFSs("workload-low", appliedSpec),
			wantFS: []string{"system-high", "system-low", "workload-high"}, wantRP: []string{"system-high", "system-low", "workload-high"}},
		{name: "a user object with a default's name and the label only", rps: append(Native().RequestPriorities(),
			withMeta(userRP("system-high", 1000), metav1.ObjectMeta{Name: "system-high",
				Labels: map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue}})), fss: Native().FlowSchemas()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := deepCopies(tc.rps, tc.fss)
			a := Native().Plan(tc.rps, tc.fss)
			check(t, "retire FlowSchema", fsNames(a.RetireFlowSchemas), tc.wantFS)
			check(t, "retire RequestPriority", rpNames(a.RetireRequestPriorities), tc.wantRP)
			if len(a.RepairRequestPriorities)+len(a.RepairFlowSchemas)+len(a.HandOvers)+len(a.Blocked) != 0 {
				t.Errorf("the other set's objects must only be retired: %+v", a)
			}
			for _, rp := range a.RetireRequestPriorities {
				if rp.ResourceVersion != "7" {
					t.Errorf("retired %s without its resourceVersion", rp.Name)
				}
			}
			if a.Empty() != (len(tc.wantFS)+len(tc.wantRP) == 0) {
				t.Errorf("Empty() = %v", a.Empty())
			}
			if p := Proposal().Plan(tc.rps, tc.fss); len(p.RetireFlowSchemas)+len(p.RetireRequestPriorities) != 0 {
				t.Errorf("the proposal set retires %v %v", fsNames(p.RetireFlowSchemas), rpNames(p.RetireRequestPriorities))
			}
			if !reflect.DeepEqual(before, deepCopies(tc.rps, tc.fss)) {
				t.Fatal("Plan modified its arguments")
			}
		})
	}
}
