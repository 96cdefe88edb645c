package defaults

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// TestOneSetForEveryMode checks that every enforcement mode has the same five and five, the
// non-top RequestPriorities bound to the kube-apiserver levels docs/configuration.md names and
// system-top at level 0 without a binding.
func TestOneSetForEveryMode(t *testing.T) {
	for _, mode := range []string{"", "none", "filter", EnforcementNative} {
		set := For(mode)
		check(t, mode+" RequestPriorities", rpNames(set.RequestPriorities()), allNames)
		check(t, mode+" FlowSchemas", fsNames(set.FlowSchemas()), allNames)
		if !reflect.DeepEqual(set.RequestPriorities(), Default().RequestPriorities()) ||
			!reflect.DeepEqual(set.FlowSchemas(), Default().FlowSchemas()) {
			t.Errorf("enforcement %q has other defaults than enforcement native", mode)
		}
	}
	wantLevel := map[string]string{"system-top": "", "system-high": "node-high", "system-low": "workload-high",
		"workload-high": "global-default", "workload-low": "workload-low"}
	for _, rp := range RequestPriorities() {
		if rp.Spec.NativeLevel != wantLevel[rp.Name] {
			t.Errorf("RequestPriority %s bound to %q, want %q", rp.Name, rp.Spec.NativeLevel, wantLevel[rp.Name])
		}
		// The in-process filter keeps the proposal's queuing: every level above 0 keeps its fields.
		if rp.Spec.PriorityLevel != 0 && (rp.Spec.AssuredConcurrencyShares == nil || rp.Spec.QueuesPerWidth == nil ||
			rp.Spec.QueueLengthLimit == nil) {
			t.Errorf("RequestPriority %s lost the proposal's queuing fields: %+v", rp.Name, rp.Spec)
		}
	}
	names := Names()
	if len(names["RequestPriority"]) != 5 || len(names["FlowSchema"]) != 5 {
		t.Errorf("Names() = %v, want the five of each kind", names)
	}
}

// TestBoundDefaultsAreValid checks every bound default against validation (which now admits a
// binding) and the effective configuration (all in effect).
func TestBoundDefaultsAreValid(t *testing.T) {
	rps := RequestPriorities()
	for i := range rps {
		if errs := validation.RequestPrioritySpec(&rps[i].Spec, field.NewPath("spec")); len(errs) > 0 {
			t.Errorf("RequestPriority %s: %v", rps[i].Name, errs)
		}
	}
	cfg := effective.Compute(rps, FlowSchemas())
	for _, n := range allNames {
		if !cfg.RequestPriorityStatus[n].InEffect || !cfg.FlowSchemaStatus[n].InEffect {
			t.Errorf("%s not in effect: %+v %+v", n, cfg.RequestPriorityStatus[n], cfg.FlowSchemaStatus[n])
		}
	}
}

// TestWithheld checks which owned defaults native enforcement withholds (all but system-top)
// and that a FlowSchema the user owns never is.
func TestWithheld(t *testing.T) {
	got := Withheld(existingFSs())
	var names []string
	for _, n := range allNames {
		if got[n] != "" {
			names = append(names, n)
		}
	}
	check(t, "withheld", names, []string{"system-high", "system-low", "workload-high", "workload-low"})
	for n, msg := range got {
		if !strings.Contains(msg, "kube-apiserver's") || !strings.Contains(msg, v1alpha1.AnnotationAutoUpdate) {
			t.Errorf("%s: message names no kube-apiserver FlowSchema or no way out: %s", n, msg)
		}
	}
	// The user's own copy (autoupdate "false", no label) is projected like any other FlowSchema.
	if got := Withheld(driftedFSs("workload-low", annotate("false"))); got["workload-low"] != "" {
		t.Error("a FlowSchema the user owns is withheld")
	}
	if got := Withheld(driftedFSs("system-low", unlabel)); got["system-low"] != "" {
		t.Error("a FlowSchema without the managed-by label is withheld")
	}
	if got := Withheld([]v1alpha1.FlowSchema{userFS("mine", "workload-low")}); len(got) != 0 {
		t.Errorf("a user FlowSchema is withheld: %v", got)
	}
}

// TestReplaceUnboundDefaults: an owned default RequestPriority created before the defaults
// were bound (no nativeLevel, which is immutable) is replaced, not repaired, not blocked; one
// the user owns or declared is left alone.
func TestReplaceUnboundDefaults(t *testing.T) {
	unbound := existingRPs()
	for i := range unbound {
		unbound[i].Spec.NativeLevel = ""
	}
	before := deepCopies(unbound, existingFSs())
	a := Plan(unbound, existingFSs())
	check(t, "replace", rpNames(a.ReplaceRequestPriorities), []string{"system-high", "system-low", "workload-high", "workload-low"})
	if len(a.RepairRequestPriorities)+len(a.Blocked)+len(a.CreateRequestPriorities)+len(a.HandOvers) != 0 {
		t.Errorf("unbound defaults must only be replaced: %+v", a)
	}
	for _, rp := range a.ReplaceRequestPriorities {
		if rp.ResourceVersion != "7" || rp.Spec.NativeLevel != "" {
			t.Errorf("replacement of %s is not the object the plan saw: %+v", rp.Name, rp)
		}
		fresh, ok := Replacement(&rp)
		if !ok || fresh.Spec.NativeLevel == "" || fresh.ResourceVersion != "" || !Owned(&fresh) {
			t.Errorf("Replacement(%s) = %+v, %v", rp.Name, fresh, ok)
		}
	}
	if !reflect.DeepEqual(before, deepCopies(unbound, existingFSs())) {
		t.Fatal("Plan modified its arguments")
	}
	unbound[1].Annotations[v1alpha1.AnnotationAutoUpdate] = "false"
	appliedSpec(&unbound[2].ObjectMeta)
	a = Plan(unbound, existingFSs())
	check(t, "replace beside a user's and an applied one", rpNames(a.ReplaceRequestPriorities), []string{"workload-high", "workload-low"})
}

// TestReplacementSparesUsersReferences: an unbound owned default that a FlowSchema other than
// the operator's own defaults refers to is not replaced (that would move the user's requests
// to kube-apiserver's level) but reported, naming those FlowSchemas, sorted; the operator's own
// default FlowSchemas, drifted or not, do not hold it back, while one of theirs that a user
// took over or applied does. With the user's references gone, it is replaced.
func TestReplacementSparesUsersReferences(t *testing.T) {
	unbound := existingRPs()
	for i := range unbound {
		unbound[i].Spec.NativeLevel = ""
	}
	fss := append(existingFSs(), userFS("zeta", "workload-low"), userFS("alpha", "workload-low"), userFS("other", "system-high"))
	fss[2].Spec.MatchingPriority = 7 // the operator's own system-low, drifted (to be repaired): not the user's
	before := deepCopies(unbound, fss)
	a := Plan(unbound, fss)
	if !reflect.DeepEqual(before, deepCopies(unbound, fss)) {
		t.Fatal("Plan modified its arguments")
	}
	check(t, "replace", rpNames(a.ReplaceRequestPriorities), []string{"system-low", "workload-high"})
	check(t, "repair FlowSchema", fsNames(a.RepairFlowSchemas), []string{"system-low"})
	got := map[string]Blocked{}
	for _, b := range a.Blocked {
		got[b.Name] = b
	}
	if len(got) != 2 {
		t.Fatalf("blocked %+v, want system-high and workload-low", a.Blocked)
	}
	for name, referrers := range map[string]string{"system-high": "FlowSchema other ", "workload-low": "FlowSchema alpha, zeta "} {
		b := got[name]
		if b.Kind != "RequestPriority" || b.Reason != ReasonReplaceBlocked || !strings.Contains(b.Message, referrers) ||
			!strings.Contains(b.Message, "point those FlowSchemas at another RequestPriority") {
			t.Errorf("%s: %+v, want a ReplaceBlocked report naming %q and the way out", name, b, referrers)
		}
	}
	if a.Empty() {
		t.Error("Empty() with replacements to make")
	}

	// A default FlowSchema the user took over, or whose other spec an applier declared, is the user's.
	fss = existingFSs()
	fss[3].Annotations[v1alpha1.AnnotationAutoUpdate] = "false" // workload-high
	fss[4].Spec.MatchingPriority = 7                            // workload-low, applied: handed over
	appliedSpec(&fss[4].ObjectMeta)
	a = Plan(unbound, fss)
	check(t, "replace beside the user's default FlowSchemas", rpNames(a.ReplaceRequestPriorities), []string{"system-high", "system-low"})
	check(t, "hand over", handOverNames(a.HandOvers), []string{"workload-low"})

	// The user's references gone (pointed elsewhere): every unbound default is replaced.
	fss = append(existingFSs(), userFS("alpha", "mine"))
	a = Plan(unbound, fss)
	check(t, "replace once unreferred", rpNames(a.ReplaceRequestPriorities), []string{"system-high", "system-low", "workload-high", "workload-low"})
	if len(a.Blocked) != 0 {
		t.Errorf("blocked %+v once no user FlowSchema refers to them", a.Blocked)
	}
}

func handOverNames(hs []HandOver) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Object.GetName())
	}
	return out
}

// appliedSpec marks an object's spec as declared by Argo CD's server-side apply.
func appliedSpec(m *metav1.ObjectMeta) {
	m.ManagedFields = []metav1.ManagedFieldsEntry{managed("argocd-controller", metav1.ManagedFieldsOperationApply,
		`{"f:spec":{"f:matchingPriority":{}}}`)}
}

// TestUpgradeFromSystemTopOnly: the earlier operator's native install left system-top alone
// (RequestPriority and FlowSchema), without the upgrade marker. The plan creates the other
// four and four once, despite the level-0 RequestPriority, and marks system-top last; once
// marked, the seed's rule holds again: a default the user deletes while a level-0
// RequestPriority exists is not created again.
func TestUpgradeFromSystemTopOnly(t *testing.T) {
	top, topFS := existingRPs()[:1], existingFSs()[:1]
	delete(top[0].Annotations, AnnotationDefaultSet)
	a := Plan(top, topFS)
	rest := []string{"system-high", "system-low", "workload-high", "workload-low"}
	check(t, "upgrade creates RequestPriorities", rpNames(a.CreateRequestPriorities), rest)
	check(t, "upgrade creates FlowSchemas", fsNames(a.CreateFlowSchemas), rest)
	if a.MarkUpgraded == nil || a.MarkUpgraded.Name != "system-top" || a.MarkUpgraded.ResourceVersion != "7" {
		t.Fatalf("MarkUpgraded = %+v, want the system-top the plan saw", a.MarkUpgraded)
	}
	if _, marked := top[0].Annotations[AnnotationDefaultSet]; marked {
		t.Fatal("Plan modified its argument")
	}
	// Marked (as a new install creates it): a deleted default stays deleted.
	a = Plan(existingRPs("workload-low"), existingFSs("system-low"))
	if !a.Empty() || a.MarkUpgraded != nil {
		t.Errorf("after the upgrade, a deleted default is created again: %+v", a)
	}
	// The user's system-top (autoupdate "false") is not the earlier operator's: no upgrade.
	top[0].Annotations[v1alpha1.AnnotationAutoUpdate] = "false"
	if a := Plan(top, topFS); !a.Empty() || a.MarkUpgraded != nil {
		t.Errorf("upgrade from a user's system-top: %+v", a)
	}
	// Created by this operator, system-top carries the marker.
	if fresh := RequestPriorities()[0]; fresh.Annotations[AnnotationDefaultSet] != DefaultSetBound {
		t.Errorf("a new system-top lacks the marker: %v", fresh.Annotations)
	}
}
