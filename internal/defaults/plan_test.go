package defaults

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/validation"
)

var allNames = []string{"system-top", "system-high", "system-low", "workload-high", "workload-low"}

// creationOrder is allNames in the order Plan creates them: the objects that end the need to
// create come last, so that an operator stopped part-way leaves the trigger in place.
var creationOrder = []string{"system-high", "system-low", "workload-high", "workload-low", "system-top"}

// existingRPs returns the default RequestPriority objects as the operator left them, minus the
// named ones, with a resourceVersion as the API server would set it.
func existingRPs(without ...string) []v1alpha1.RequestPriority {
	var out []v1alpha1.RequestPriority
	for _, rp := range RequestPriorities() {
		if !contains(without, rp.Name) {
			rp.ResourceVersion = "7"
			out = append(out, rp)
		}
	}
	return out
}

func existingFSs(without ...string) []v1alpha1.FlowSchema {
	var out []v1alpha1.FlowSchema
	for _, fs := range FlowSchemas() {
		if !contains(without, fs.Name) {
			fs.ResourceVersion = "7"
			out = append(out, fs)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func userRP(name string, level int32) v1alpha1.RequestPriority {
	rp := v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.RequestPrioritySpec{PriorityLevel: level}}
	if level != 0 {
		rp.Spec.AssuredConcurrencyShares = ptr.To[int32](5)
		rp.Spec.QueuesPerWidth = ptr.To[int32](1)
		rp.Spec.QueueLengthLimit = ptr.To[int32](10)
	}
	return rp
}

func userFS(name, rp string) v1alpha1.FlowSchema {
	return v1alpha1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.FlowSchemaSpec{
		MatchingPriority: 100, RequestPriority: v1alpha1.RequestPriorityReference{Name: rp},
		Match: []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{}}}}}
}

// drifted returns the existing defaults with the named RequestPriority's shares changed and
// its metadata edited by edit.
func driftedRPs(name string, edit func(*metav1.ObjectMeta)) []v1alpha1.RequestPriority {
	rps := existingRPs()
	for i := range rps {
		if rps[i].Name == name {
			rps[i].Spec.AssuredConcurrencyShares = ptr.To[int32](99)
			edit(&rps[i].ObjectMeta)
		}
	}
	return rps
}

func driftedFSs(name string, edit func(*metav1.ObjectMeta)) []v1alpha1.FlowSchema {
	fss := existingFSs()
	for i := range fss {
		if fss[i].Name == name {
			fss[i].Spec.MatchingPriority = 7
			fss[i].Spec.FlowDistinguisher = nil
			edit(&fss[i].ObjectMeta)
		}
	}
	return fss
}

func keep(*metav1.ObjectMeta) {}

func annotate(v string) func(*metav1.ObjectMeta) {
	return func(m *metav1.ObjectMeta) { m.Annotations[v1alpha1.AnnotationAutoUpdate] = v }
}

func unannotate(m *metav1.ObjectMeta) { delete(m.Annotations, v1alpha1.AnnotationAutoUpdate) }
func unlabel(m *metav1.ObjectMeta)    { delete(m.Labels, v1alpha1.LabelManagedBy) }

type want struct {
	createRP, createFS, repairRP, repairFS, blocked []string
}

func TestPlan(t *testing.T) {
	cases := []struct {
		name string
		rps  []v1alpha1.RequestPriority
		fss  []v1alpha1.FlowSchema
		want want
	}{
		{name: "empty cluster gets every default",
			want: want{createRP: creationOrder, createFS: creationOrder}},
		{name: "defaults in place: nothing to do",
			rps: existingRPs(), fss: existingFSs()},
		{name: "user's level-0 admins replaces system-top: not recreated",
			rps: append(existingRPs("system-top"), userRP("admins", 0)), fss: existingFSs()},
		{name: "level 0 exists but no FlowSchema refers to it: missing FlowSchemas created",
			rps:  []v1alpha1.RequestPriority{userRP("admins", 0)},
			want: want{createFS: creationOrder}},
		{name: "a FlowSchema refers to a level-0 RequestPriority: no FlowSchema created",
			rps: []v1alpha1.RequestPriority{userRP("admins", 0)}, fss: []v1alpha1.FlowSchema{userFS("admins", "admins")},
			want: want{}},
		{name: "a FlowSchema names system-top but it is not level 0: FlowSchemas created except names in use",
			rps:  []v1alpha1.RequestPriority{userRP("admins", 0), userRP("system-top", 5)},
			fss:  []v1alpha1.FlowSchema{userFS("system-top", "system-top")},
			want: want{createFS: creationOrder[:4]}},
		{name: "no level 0: defaults created except names in use",
			rps:  append(existingRPs("system-top", "system-high"), userRP("system-high", 1500)),
			fss:  existingFSs("system-top"),
			want: want{createRP: []string{"system-top"}, createFS: []string{"system-top"}}},
		{name: "every level-0 object deleted, user objects keep their names",
			rps: []v1alpha1.RequestPriority{userRP("system-low", 2500), userRP("mine", 7)},
			fss: []v1alpha1.FlowSchema{userFS("workload-low", "mine")},
			want: want{createRP: []string{"system-high", "workload-high", "workload-low", "system-top"},
				createFS: []string{"system-high", "system-low", "workload-high", "system-top"}}},
		{name: "FlowSchemas naming a level-0 object are created last",
			rps:  []v1alpha1.RequestPriority{userRP("system-high", 0)},
			fss:  []v1alpha1.FlowSchema{userFS("workload-high", "nothing")},
			want: want{createFS: []string{"system-low", "workload-low", "system-top", "system-high"}}},
		{name: "owned RequestPriority drifted: repaired",
			rps: driftedRPs("system-high", keep), fss: existingFSs(),
			want: want{repairRP: []string{"system-high"}}},
		{name: "owned FlowSchema drifted: repaired",
			rps: existingRPs(), fss: driftedFSs("workload-high", keep),
			want: want{repairFS: []string{"workload-high"}}},
		{name: "autoupdate false: the user owns it",
			rps: driftedRPs("system-high", annotate("false")), fss: driftedFSs("system-low", annotate("false"))},
		{name: "autoupdate absent: the user owns it",
			rps: driftedRPs("system-high", unannotate), fss: driftedFSs("system-low", unannotate)},
		{name: "autoupdate something else: the user owns it",
			rps: driftedRPs("system-high", annotate("True")), fss: existingFSs()},
		{name: "no managed-by label: not the operator's object",
			rps: driftedRPs("system-high", unlabel), fss: driftedFSs("system-low", unlabel)},
		{name: "managed object with another level cannot be updated: blocked",
			rps:  append(existingRPs("workload-low"), withMeta(userRP("workload-low", 12000), RequestPriorities()[4].ObjectMeta)),
			fss:  existingFSs(),
			want: want{blocked: []string{"workload-low"}}},
		{name: "managed label and annotation on a name that is no default: untouched",
			rps: append(existingRPs(), withMeta(userRP("extra", 77), metav1.ObjectMeta{Name: "extra",
				Labels:      map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue},
				Annotations: map[string]string{v1alpha1.AnnotationAutoUpdate: "true"}})),
			fss: existingFSs()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := deepCopies(tc.rps, tc.fss)
			got := Plan(tc.rps, tc.fss)
			if !reflect.DeepEqual(before, deepCopies(tc.rps, tc.fss)) {
				t.Fatal("Plan modified its arguments")
			}
			check(t, "create RequestPriority", rpNames(got.CreateRequestPriorities), tc.want.createRP)
			check(t, "create FlowSchema", fsNames(got.CreateFlowSchemas), tc.want.createFS)
			check(t, "repair RequestPriority", rpNames(got.RepairRequestPriorities), tc.want.repairRP)
			check(t, "repair FlowSchema", fsNames(got.RepairFlowSchemas), tc.want.repairFS)
			var blocked []string
			for _, b := range got.Blocked {
				blocked = append(blocked, b.Name)
			}
			check(t, "blocked", blocked, tc.want.blocked)
			empty := len(tc.want.createRP)+len(tc.want.createFS)+len(tc.want.repairRP)+len(tc.want.repairFS) == 0
			if got.Empty() != empty {
				t.Errorf("Empty() = %v, want %v", got.Empty(), empty)
			}
		})
	}
}

func withMeta(rp v1alpha1.RequestPriority, m metav1.ObjectMeta) v1alpha1.RequestPriority {
	rp.ObjectMeta = *m.DeepCopy()
	return rp
}

func deepCopies(rps []v1alpha1.RequestPriority, fss []v1alpha1.FlowSchema) []any {
	var out []any
	for i := range rps {
		out = append(out, rps[i].DeepCopy())
	}
	for i := range fss {
		out = append(out, fss[i].DeepCopy())
	}
	return out
}

func check(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

func rpNames(rps []v1alpha1.RequestPriority) []string {
	var out []string
	for _, rp := range rps {
		out = append(out, rp.Name)
	}
	return out
}

func fsNames(fss []v1alpha1.FlowSchema) []string {
	var out []string
	for _, fs := range fss {
		out = append(out, fs.Name)
	}
	return out
}

// TestPlanRepairKeepsIdentity checks that a repair carries the actual object's metadata
// (resourceVersion included, so a concurrent user edit conflicts instead of being overwritten)
// and exactly the default spec.
func TestPlanRepairKeepsIdentity(t *testing.T) {
	rps := driftedRPs("system-high", func(m *metav1.ObjectMeta) { m.Labels["team"] = "infra" })
	got := Plan(rps, existingFSs()).RepairRequestPriorities
	if len(got) != 1 {
		t.Fatalf("got %d repairs, want 1", len(got))
	}
	if got[0].ResourceVersion != "7" || got[0].Labels["team"] != "infra" {
		t.Errorf("repair lost the object's metadata: %+v", got[0].ObjectMeta)
	}
	if !reflect.DeepEqual(got[0].Spec, RequestPriorities()[1].Spec) {
		t.Errorf("repair spec = %+v, want the default", got[0].Spec)
	}
}

// TestCreatedObjectsAreMarked checks the label and annotation that make an object the
// operator's, and that every call returns fresh copies.
func TestCreatedObjectsAreMarked(t *testing.T) {
	rps, fss := RequestPriorities(), FlowSchemas()
	for _, m := range append(metas(rps), fsMetas(fss)...) {
		if m.Labels[v1alpha1.LabelManagedBy] != v1alpha1.ManagedByValue || m.Annotations[v1alpha1.AnnotationAutoUpdate] != "true" {
			t.Errorf("%s: labels %v annotations %v", m.Name, m.Labels, m.Annotations)
		}
	}
	rps[1].Spec.HandSize = ptr.To[int32](1)
	*fss[1].Spec.Match[0].And[0].SuperSet = v1alpha1.SetTest{}
	rps[1].Labels["x"] = "y"
	if *RequestPriorities()[1].Spec.HandSize != 6 || FlowSchemas()[1].Spec.Match[0].And[0].SuperSet.Field != v1alpha1.FieldGroups ||
		RequestPriorities()[1].Labels["x"] != "" {
		t.Error("RequestPriorities/FlowSchemas returned shared data")
	}
	check(t, "RequestPriority names", rpNames(RequestPriorities()), allNames)
	check(t, "FlowSchema names", fsNames(FlowSchemas()), allNames)
}

func metas(rps []v1alpha1.RequestPriority) []metav1.ObjectMeta {
	var out []metav1.ObjectMeta
	for _, rp := range rps {
		out = append(out, rp.ObjectMeta)
	}
	return out
}

func fsMetas(fss []v1alpha1.FlowSchema) []metav1.ObjectMeta {
	var out []metav1.ObjectMeta
	for _, fs := range fss {
		out = append(out, fs.ObjectMeta)
	}
	return out
}

// TestDefaultsAreValidAndInEffect checks that the defaults pass the same validation as
// admission and that every one of them is in effect, each FlowSchema at its own
// RequestPriority: the defaults come up Ready.
func TestDefaultsAreValidAndInEffect(t *testing.T) {
	rps, fss := RequestPriorities(), FlowSchemas()
	specs := map[string]*v1alpha1.RequestPrioritySpec{}
	for i := range rps {
		if errs := validation.RequestPrioritySpec(&rps[i].Spec, field.NewPath("spec")); len(errs) > 0 {
			t.Errorf("RequestPriority %s: %v", rps[i].Name, errs)
		}
		specs[rps[i].Name] = &rps[i].Spec
	}
	for i := range fss {
		errs, warnings := validation.FlowSchemaSpec(&fss[i].Spec, field.NewPath("spec"))
		refErrs, refWarnings := validation.FlowSchemaAgainstPriority(&fss[i].Spec, specs[fss[i].Spec.RequestPriority.Name], field.NewPath("spec"))
		if len(errs)+len(warnings)+len(refErrs)+len(refWarnings) > 0 {
			t.Errorf("FlowSchema %s: %v %v %v %v", fss[i].Name, errs, warnings, refErrs, refWarnings)
		}
		if fss[i].Spec.RequestPriority.Name != fss[i].Name {
			t.Errorf("FlowSchema %s refers to %s, want its namesake", fss[i].Name, fss[i].Spec.RequestPriority.Name)
		}
	}
	cfg := effective.Compute(rps, fss)
	for name, st := range cfg.RequestPriorityStatus {
		if !st.InEffect || st.FlowSchemas != 1 {
			t.Errorf("RequestPriority %s: %+v", name, st)
		}
	}
	for name, st := range cfg.FlowSchemaStatus {
		if !st.InEffect {
			t.Errorf("FlowSchema %s: %+v", name, st)
		}
	}
	if len(cfg.Priorities) != 5 || cfg.CatchAll.Priority.Name != "workload-low" {
		t.Errorf("effective levels %d, catch-all at %s", len(cfg.Priorities), cfg.CatchAll.Priority.Name)
	}
}
