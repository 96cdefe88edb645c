package defaults

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// TestRepairPatchPreconditions checks the repair patch against the real API server: it applies
// only while generation, label and annotation are what the plan saw, and every refusal is
// recognised as a lost race.
func TestRepairPatchPreconditions(t *testing.T) {
	drifted := defaultFS("workload-low")
	drifted.Spec.MatchingPriority = 1
	create(t, &drifted)
	want := defaultFS("workload-low").Spec

	for _, tc := range []struct {
		name string
		edit func(*flowv1.FlowSchema)
	}{
		{"spec changed", func(f *flowv1.FlowSchema) { f.Spec.MatchingPriority = 2 }},
		{"autoupdate false", func(f *flowv1.FlowSchema) { f.Annotations[flowv1.AnnotationAutoUpdate] = "false" }},
		{"managed-by label gone", func(f *flowv1.FlowSchema) { delete(f.Labels, flowv1.LabelManagedBy) }},
	} {
		seen := getFS(t, "workload-low") // what the plan saw
		updateFS(t, "workload-low", tc.edit)
		patch, err := repairPatch(seen.Generation, want)
		if err != nil {
			t.Fatal(err)
		}
		current := getFS(t, "workload-low")
		if err := k8s.Patch(context.Background(), current, patch); !preconditionFailed(err) {
			t.Errorf("%s: patch returned %v, want a failed precondition", tc.name, err)
		}
		updateFS(t, "workload-low", func(f *flowv1.FlowSchema) { f.Labels, f.Annotations, f.Spec = seen.Labels, seen.Annotations, seen.Spec })
	}

	seen := getFS(t, "workload-low")
	patch, err := repairPatch(seen.Generation, want)
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Patch(context.Background(), seen, patch); err != nil {
		t.Fatalf("patch with matching preconditions: %v", err)
	}
	if !equality.Semantic.DeepEqual(getFS(t, "workload-low").Spec, want) {
		t.Errorf("spec after repair: %+v", seen.Spec)
	}
	if preconditionFailed(nil) || preconditionFailed(errors.New("connection refused")) {
		t.Error("preconditionFailed accepts errors that are no API refusal")
	}
}

// TestHandOverPatchPreconditions checks the hand-over patch against the real API server: it
// sets autoupdate "false" only while generation, label and annotation are what the plan saw.
func TestHandOverPatchPreconditions(t *testing.T) {
	applied := defaultRP("system-high")
	applied.Spec.QueueLengthLimit = ptr.To[int32](200)
	create(t, &applied)
	for _, tc := range []struct {
		name string
		edit func(*flowv1.RequestPriority)
	}{
		{"spec changed", func(rp *flowv1.RequestPriority) { rp.Spec.QueueLengthLimit = ptr.To[int32](201) }},
		{"autoupdate false", func(rp *flowv1.RequestPriority) { rp.Annotations[flowv1.AnnotationAutoUpdate] = "false" }},
		{"managed-by label gone", func(rp *flowv1.RequestPriority) { delete(rp.Labels, flowv1.LabelManagedBy) }},
	} {
		seen := getRP(t, "system-high")
		updateRP(t, "system-high", tc.edit)
		patch, err := handOverPatch(seen.Generation)
		if err != nil {
			t.Fatal(err)
		}
		if err := k8s.Patch(context.Background(), getRP(t, "system-high"), patch); !preconditionFailed(err) {
			t.Errorf("%s: patch returned %v, want a failed precondition", tc.name, err)
		}
		updateRP(t, "system-high", func(rp *flowv1.RequestPriority) {
			rp.Labels, rp.Annotations, rp.Spec = seen.Labels, seen.Annotations, seen.Spec
		})
	}
	seen := getRP(t, "system-high")
	patch, err := handOverPatch(seen.Generation)
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Patch(context.Background(), seen, patch); err != nil {
		t.Fatalf("patch with matching preconditions: %v", err)
	}
	got := getRP(t, "system-high")
	if got.Annotations[flowv1.AnnotationAutoUpdate] != "false" || got.Labels[flowv1.LabelManagedBy] != flowv1.ManagedByValue ||
		!equality.Semantic.DeepEqual(got.Spec, seen.Spec) {
		t.Errorf("after the hand-over: %v %v %+v", got.Labels, got.Annotations, got.Spec)
	}
}
