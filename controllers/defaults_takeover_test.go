package controllers

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// gitOpsManager is the field manager Argo CD uses for server-side apply.
const gitOpsManager = "argocd-controller"

// forceApply server-side-applies obj as a GitOps tool does (its own field manager,
// --force-conflicts): a manifest of apiVersion, kind, name, the annotations given and spec.
func forceApply(t testing.TB, obj client.Object) {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	manifest := &unstructured.Unstructured{Object: map[string]any{"spec": u["spec"]}}
	manifest.SetGroupVersionKind(flowv1.GroupVersion.WithKind(fmt.Sprintf("%T", obj)[len("*v1alpha1."):]))
	manifest.SetName(obj.GetName())
	manifest.SetAnnotations(obj.GetAnnotations())
	if err := k8s.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(manifest),
		client.FieldOwner(gitOpsManager), client.ForceOwnership); err != nil {
		t.Fatalf("applying %s: %v", obj.GetName(), err)
	}
}

// countEvents counts the events of a reason about one object.
func countEvents(t testing.TB, kind, name, reason string) int {
	t.Helper()
	var list eventsv1.EventList
	if err := k8s.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Reason == reason {
			n++
		}
	}
	return n
}

// TestGitOpsTakeOverIsNotFought applies a platform team's own system-high (RequestPriority
// and FlowSchema) a dozen times, as Argo CD does with server-side apply and --force-conflicts,
// without the autoupdate annotation. The operator must hand the objects over (annotation
// "false", a TakenOver event) and restore neither spec, not even once.
func TestGitOpsTakeOverIsNotFought(t *testing.T) {
	resetCluster(t)
	op := startOperator(t, manageDefaults())
	waitAllReady(t, defaultNames, defaultNames)

	const applies = 12
	for i := range applies {
		rp := &flowv1.RequestPriority{}
		rp.Name, rp.Spec = "system-high", defaultRP("system-high").Spec
		rp.Spec.AssuredConcurrencyShares = ptr.To[int32](20)
		rp.Spec.QueueLengthLimit = ptr.To(int32(200 + i))
		forceApply(t, rp)
		fs := &flowv1.FlowSchema{}
		fs.Name, fs.Spec = "system-high", defaultFS("system-high").Spec
		fs.Spec.MatchingPriority = int32(100600 + i)
		forceApply(t, fs)
		if i == 0 { // the first apply is the take-over: wait for the operator's answer
			waitTakenOver(t)
		}
	}
	// Every later apply was seen: the barrier's repairs come after them in the one queue.
	barrier(t, "workload-high", "workload-low")

	rp, fs := getRP(t, "system-high"), getFS(t, "system-high")
	if *rp.Spec.QueueLengthLimit != 200+applies-1 || *rp.Spec.AssuredConcurrencyShares != 20 {
		t.Errorf("RequestPriority system-high spec %+v, want the last applied one", rp.Spec)
	}
	if fs.Spec.MatchingPriority != 100600+applies-1 {
		t.Errorf("FlowSchema system-high matchingPriority %d, want the last applied one", fs.Spec.MatchingPriority)
	}
	for _, kind := range []string{kindRequestPriority, kindFlowSchema} {
		if n := countEvents(t, kind, "system-high", "Repaired"); n != 0 {
			t.Errorf("%s system-high was reverted %d times", kind, n)
		}
		if n := countEvents(t, kind, "system-high", "TakenOver"); n != 1 {
			t.Errorf("%s system-high: %d TakenOver events, want 1", kind, n)
		}
		wantCounter(t, op.registry, "apf_operator_defaults_repaired_total", kind, 1) // the barrier's
		wantCounter(t, op.registry, "apf_operator_defaults_taken_over_total", kind, 1)
	}
	waitRPReason(t, "system-high", "True/Accepted")
	waitFSReason(t, "system-high", "True/Accepted")
}

// waitTakenOver waits until both system-high objects carry autoupdate "false" (the label stays:
// the operator created them) and the TakenOver events name the applier.
func waitTakenOver(t testing.TB) {
	t.Helper()
	eventually(t, func() error {
		rp, fs := getRP(t, "system-high"), getFS(t, "system-high")
		for _, m := range []client.Object{rp, fs} {
			if m.GetAnnotations()[flowv1.AnnotationAutoUpdate] != "false" || m.GetLabels()[flowv1.LabelManagedBy] != flowv1.ManagedByValue {
				return fmt.Errorf("%T system-high not handed over yet: %v %v", m, m.GetLabels(), m.GetAnnotations())
			}
		}
		return nil
	})
	waitEvent(t, "RequestPriority", "system-high", "TakenOver")
	waitEvent(t, "FlowSchema", "system-high", "TakenOver")
}

// TestAppliedAutoUpdateTrueIsReportedNotFought applies a manifest that pins autoupdate "true"
// yet carries its own spec: neither restoring the spec nor changing the annotation would
// last, so the operator leaves both alone and reports it.
func TestAppliedAutoUpdateTrueIsReportedNotFought(t *testing.T) {
	resetCluster(t)
	op := startOperator(t, manageDefaults())
	waitAllReady(t, defaultNames, defaultNames)

	fs := &flowv1.FlowSchema{}
	fs.Name, fs.Spec = "system-low", defaultFS("system-low").Spec
	fs.Annotations = map[string]string{flowv1.AnnotationAutoUpdate: "true"}
	for i := range 3 {
		fs.Spec.MatchingPriority = int32(200600 + i)
		forceApply(t, fs)
	}
	waitEvent(t, "FlowSchema", "system-low", "RepairBlocked")
	barrier(t, "workload-high", "workload-low")
	got := getFS(t, "system-low")
	if got.Spec.MatchingPriority != 200602 || got.Annotations[flowv1.AnnotationAutoUpdate] != "true" {
		t.Errorf("system-low was changed: matchingPriority %d, annotations %v", got.Spec.MatchingPriority, got.Annotations)
	}
	if n := countEvents(t, "FlowSchema", "system-low", "RepairBlocked"); n != 1 {
		t.Errorf("%d RepairBlocked events for FlowSchema system-low, want 1 (reported once)", n)
	}
	wantCounter(t, op.registry, "apf_operator_defaults_repaired_total", kindFlowSchema, 1) // the barrier's
	wantCounter(t, op.registry, "apf_operator_defaults_taken_over_total", kindFlowSchema, 0)
}

// TestClientSideApplyTakesOver changes a default's spec as kubectl's client-side apply does (an
// update that records the manifest in the last-applied-configuration annotation): the object
// is handed over as well, not reverted.
func TestClientSideApplyTakesOver(t *testing.T) {
	resetCluster(t)
	op := startOperator(t, manageDefaults())
	waitAllReady(t, defaultNames, defaultNames)

	manifest := `{"apiVersion":"flowcontrol.apf-operator.io/v1alpha1","kind":"FlowSchema","metadata":{"name":"workload-low"},"spec":{"matchingPriority":1000600}}`
	for i := range 3 {
		updateFS(t, "workload-low", func(fs *flowv1.FlowSchema) {
			fs.Annotations[corev1.LastAppliedConfigAnnotation] = manifest
			fs.Spec.MatchingPriority = int32(1000600 + i)
		})
	}
	eventually(t, func() error {
		if got := getFS(t, "workload-low"); got.Annotations[flowv1.AnnotationAutoUpdate] != "false" {
			return fmt.Errorf("not handed over yet: %v", got.Annotations)
		}
		return nil
	})
	barrier(t, "workload-high", "workload-high")
	if got := getFS(t, "workload-low"); got.Spec.MatchingPriority != 1000602 {
		t.Errorf("workload-low matchingPriority %d, want the applied 1000602", got.Spec.MatchingPriority)
	}
	if n := countEvents(t, kindFlowSchema, "workload-low", "Repaired"); n != 0 {
		t.Errorf("FlowSchema workload-low was reverted %d times", n)
	}
	waitEvent(t, kindFlowSchema, "workload-low", "TakenOver")
	wantCounter(t, op.registry, "apf_operator_defaults_taken_over_total", kindFlowSchema, 1)
}
