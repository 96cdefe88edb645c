package defaults

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

func managed(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(fields)}
}

const (
	specFields        = `{"f:spec":{"f:queueLengthLimit":{},"f:assuredConcurrencyShares":{}}}`
	metadataFields    = `{"f:metadata":{"f:labels":{"f:team":{}}}}`
	autoUpdateAndSpec = `{"f:metadata":{"f:annotations":{"f:flowcontrol.apf-operator.io/autoupdate-spec":{}}},"f:spec":{"f:handSize":{}}}`
)

func TestDeclared(t *testing.T) {
	for _, tc := range []struct {
		name        string
		fields      []metav1.ManagedFieldsEntry
		lastApplied string
		wantBy      string // "" when not declared
		wantSets    bool
	}{
		{name: "created and edited by updates only",
			fields: []metav1.ManagedFieldsEntry{managed("apf-operator", metav1.ManagedFieldsOperationUpdate, specFields),
				managed("kubectl-edit", metav1.ManagedFieldsOperationUpdate, specFields)}},
		{name: "server-side apply of spec fields",
			fields: []metav1.ManagedFieldsEntry{managed("apf-operator", metav1.ManagedFieldsOperationUpdate, metadataFields),
				managed("argocd-controller", metav1.ManagedFieldsOperationApply, specFields)},
			wantBy: `field manager "argocd-controller" (server-side apply)`},
		{name: "server-side apply of labels only declares no spec",
			fields: []metav1.ManagedFieldsEntry{managed("kustomize-controller", metav1.ManagedFieldsOperationApply, metadataFields)}},
		{name: "applied manifest also sets the autoupdate annotation",
			fields: []metav1.ManagedFieldsEntry{managed("kustomize-controller", metav1.ManagedFieldsOperationApply, autoUpdateAndSpec)},
			wantBy: `field manager "kustomize-controller" (server-side apply)`, wantSets: true},
		{name: "unreadable managed fields prove nothing",
			fields: []metav1.ManagedFieldsEntry{managed("x", metav1.ManagedFieldsOperationApply, `{"f:spec":`)}},
		{name: "client-side apply of a spec",
			lastApplied: `{"apiVersion":"flowcontrol.apf-operator.io/v1alpha1","kind":"RequestPriority","metadata":{"name":"system-high"},"spec":{"priorityLevel":1000}}`,
			wantBy:      "kubectl client-side apply (annotation " + corev1.LastAppliedConfigAnnotation + ")"},
		{name: "client-side apply with the autoupdate annotation",
			lastApplied: `{"metadata":{"annotations":{"flowcontrol.apf-operator.io/autoupdate-spec":"true"}},"spec":{}}`,
			wantBy:      "kubectl client-side apply (annotation " + corev1.LastAppliedConfigAnnotation + ")", wantSets: true},
		{name: "client-side apply without a spec",
			lastApplied: `{"metadata":{"labels":{"team":"a"}}}`},
		{name: "client-side annotation that is no JSON", lastApplied: `not json`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "system-high", ManagedFields: tc.fields}}
			if tc.lastApplied != "" {
				obj.Annotations = map[string]string{corev1.LastAppliedConfigAnnotation: tc.lastApplied}
			}
			got, ok := Declared(obj)
			if ok != (tc.wantBy != "") || got.By != tc.wantBy || got.SetsAutoUpdate != tc.wantSets {
				t.Errorf("Declared = %+v, %v; want by %q, sets autoupdate %v", got, ok, tc.wantBy, tc.wantSets)
			}
		})
	}
}

// TestPlanHandsOverAppliedSpecs checks that a drifted default whose spec an applier declared
// is handed over (or reported when the manifest pins autoupdate "true"), never repaired.
func TestPlanHandsOverAppliedSpecs(t *testing.T) {
	applied := func(fields string) func(*metav1.ObjectMeta) {
		return func(m *metav1.ObjectMeta) {
			m.ManagedFields = []metav1.ManagedFieldsEntry{managed("argocd-controller", metav1.ManagedFieldsOperationApply, fields)}
		}
	}
	a := Plan(driftedRPs("system-high", applied(specFields)), driftedFSs("workload-low", applied(specFields)))
	if len(a.RepairRequestPriorities) != 0 || len(a.RepairFlowSchemas) != 0 || len(a.Blocked) != 0 {
		t.Fatalf("applied specs must not be repaired or blocked: %+v", a)
	}
	got := map[string]bool{}
	for _, h := range a.HandOvers {
		got[h.Kind+"/"+h.Object.GetName()] = true
		if h.By != `field manager "argocd-controller" (server-side apply)` || h.Object.GetGeneration() != 0 {
			t.Errorf("hand-over %+v", h)
		}
	}
	if len(got) != 2 || !got["RequestPriority/system-high"] || !got["FlowSchema/workload-low"] {
		t.Errorf("hand-overs %v, want RequestPriority/system-high and FlowSchema/workload-low", got)
	}

	a = Plan(existingRPs(), driftedFSs("system-low", applied(autoUpdateAndSpec)))
	if len(a.HandOvers) != 0 || len(a.RepairFlowSchemas) != 0 || len(a.Blocked) != 1 ||
		a.Blocked[0].Kind != "FlowSchema" || a.Blocked[0].Name != "system-low" {
		t.Fatalf("a manifest pinning autoupdate true must be reported, not repaired or handed over: %+v", a)
	}

	// An applied default that still has the default spec needs nothing.
	undrifted := existingRPs()
	applied(specFields)(&undrifted[0].ObjectMeta)
	if a := Plan(undrifted, existingFSs()); !a.Empty() || len(a.Blocked) != 0 {
		t.Errorf("undrifted applied default: %+v", a)
	}
}
