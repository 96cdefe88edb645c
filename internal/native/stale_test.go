package native_test

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
)

// TestStaleOnlyUnderTheOperatorsNames: an owned-looking object (label and annotation copied by
// hand) with a name the projection never gives is not stale; one of its own names is.
func TestStaleOnlyUnderTheOperatorsNames(t *testing.T) {
	owned := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Labels: map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue},
			Annotations: map[string]string{flowv1.AnnotationSource: "RequestPriority/gone"}}
	}
	existing := native.Existing{
		PriorityLevels: []flowcontrolv1.PriorityLevelConfiguration{
			{ObjectMeta: owned("apf-gone")}, {ObjectMeta: owned("team-copy")}, {ObjectMeta: owned("apf.gone")}},
		FlowSchemas: []flowcontrolv1.FlowSchema{{ObjectMeta: owned("apf-gone")}, {ObjectMeta: owned("team-copy")}},
	}
	set := defaults.Native()
	plan := native.Project(effective.Compute(set.RequestPriorities(), set.FlowSchemas()), existing)
	if !equal(plan.StalePriorityLevels, []string{"apf-gone", "apf.gone"}) || !equal(plan.StaleFlowSchemas, []string{"apf-gone"}) {
		t.Errorf("stale levels %v, schemas %v; want only the operator's names", plan.StalePriorityLevels, plan.StaleFlowSchemas)
	}
	for name, want := range map[string]bool{"apf-x": true, "apf.x": true, "team-copy": false, "apfx": false, "": false} {
		if got := native.OwnedName(name); got != want {
			t.Errorf("OwnedName(%q) = %v, want %v", name, got, want)
		}
	}
}
