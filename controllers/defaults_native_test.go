package controllers

import (
	"context"
	"fmt"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
)

// nativeDefaults runs the defaults reconciler with enforcement native.
func nativeDefaults() operatorConfig {
	return operatorConfig{options: Options{Enforcement: EnforcementNative, ManageDefaults: true, Clock: realClock}}
}

// boundNames are the defaults bound to kube-apiserver's levels, whose FlowSchemas are withheld.
var boundNames = []string{"system-high", "system-low", "workload-high", "workload-low"}

// seedUnboundDefaults creates the defaults other than system-top as an operator with the
// earlier, unbound defaults left them (label and autoupdate "true", no nativeLevel); edit
// changes one before.
func seedUnboundDefaults(t testing.TB, edit func(client.Object)) {
	t.Helper()
	for _, rp := range defaults.RequestPriorities() {
		if rp.Name != "system-top" {
			rp.Spec.NativeLevel = ""
			edit(&rp)
			create(t, &rp)
		}
	}
	for _, fs := range defaults.FlowSchemas() {
		if fs.Name != "system-top" {
			edit(&fs)
			create(t, &fs)
		}
	}
}

// waitGone waits until the named object of our kinds no longer exists.
func waitGone(t testing.TB, obj client.Object) {
	t.Helper()
	eventually(t, func() error {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("%T %s still exists (%v)", obj, obj.GetName(), err)
	})
}

// waitProjected waits until the named object reports Projected=True.
func waitProjected(t testing.TB, obj client.Object, conds func() []metav1.Condition) {
	t.Helper()
	eventually(t, func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		c := meta.FindStatusCondition(conds(), flowv1.ConditionProjected)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != obj.GetGeneration() {
			return fmt.Errorf("%s: Projected %+v", obj.GetName(), c)
		}
		return nil
	})
}

// TestNativeDefaultsReplaceTheUnboundOnes: an operator with enforcement native, started on a
// cluster holding the unbound defaults an earlier operator created, creates system-top,
// replaces the other owned RequestPriorities by the bound ones (nativeLevel set), keeps the one
// a user took over (autoupdate "false"), and withholds the four owned default FlowSchemas:
// Projected=False, reason ShadowedByNative, not Stalled. system-top is Projected=True; the only
// native level written is the user's system-low (the bound ones add none).
func TestNativeDefaultsReplaceTheUnboundOnes(t *testing.T) {
	resetCluster(t)
	seedUnboundDefaults(t, func(obj client.Object) {
		if _, ok := obj.(*flowv1.RequestPriority); ok && obj.GetName() == "system-low" {
			obj.GetAnnotations()[flowv1.AnnotationAutoUpdate] = "false" // the user owns it
		}
	})
	startOperator(t, nativeDefaults())
	for _, name := range boundNames {
		want, _ := defaults.RequestPriority(name)
		if name == "system-low" {
			want.Spec.NativeLevel = ""
		}
		eventually(t, func() error {
			got := &flowv1.RequestPriority{}
			if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, got); err != nil {
				return err // being replaced
			}
			if got.Spec.NativeLevel != want.Spec.NativeLevel {
				return fmt.Errorf("RequestPriority %s bound to %q, want %q", name, got.Spec.NativeLevel, want.Spec.NativeLevel)
			}
			return nil
		})
		fs := &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}}
		eventually(t, func() error {
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(fs), fs); err != nil {
				return err
			}
			c := meta.FindStatusCondition(fs.Status.Conditions, flowv1.ConditionProjected)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != flowv1.ReasonShadowedByNative {
				return fmt.Errorf("FlowSchema %s: Projected %+v", name, c)
			}
			if s := meta.FindStatusCondition(fs.Status.Conditions, flowv1.ConditionStalled); s != nil {
				return fmt.Errorf("FlowSchema %s withheld on purpose but Stalled: %+v", name, s)
			}
			return nil
		})
	}
	if rp := getRP(t, "system-low"); rp.Annotations[flowv1.AnnotationAutoUpdate] != "false" {
		t.Errorf("the user's system-low changed: %v", rp.Annotations)
	}
	rp, fs := &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "system-top"}}, &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "system-top"}}
	waitProjected(t, rp, func() []metav1.Condition { return rp.Status.Conditions })
	waitProjected(t, fs, func() []metav1.Condition { return fs.Status.Conditions })
	eventually(t, func() error {
		var plcs flowcontrolv1.PriorityLevelConfigurationList
		if err := k8s.List(context.Background(), &plcs, client.MatchingLabels{flowv1.LabelManagedBy: flowv1.ManagedByValue}); err != nil {
			return err
		}
		var names []string
		for _, plc := range plcs.Items {
			names = append(names, plc.Name)
		}
		if len(names) != 1 || names[0] != native.NativeName("system-low") {
			return fmt.Errorf("owned native levels %v, want only %s", names, native.NativeName("system-low"))
		}
		return nil
	})
	// Taken over (autoupdate "false"), a default FlowSchema is the user's and no longer withheld:
	// workload-low is projected onto the bound workload-low.
	updateFS(t, "workload-low", func(fs *flowv1.FlowSchema) { fs.Annotations[flowv1.AnnotationAutoUpdate] = "false" })
	taken := &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "workload-low"}}
	waitProjected(t, taken, func() []metav1.Condition { return taken.Status.Conditions })
}

// TestEnforcementNonePrunesNativeObjects: an operator with enforcement none deletes the native
// objects an earlier native run left (label and source annotation), at start and when one
// appears, and leaves a native object without the source annotation alone.
func TestEnforcementNonePrunesNativeObjects(t *testing.T) {
	resetCluster(t)
	level := func(name, source string) *flowcontrolv1.PriorityLevelConfiguration {
		plc := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue}},
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
				Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](1),
					LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}
		if source != "" {
			plc.Annotations = map[string]string{flowv1.AnnotationSource: source}
		}
		return plc
	}
	schema := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "apf-left", Labels: map[string]string{
		flowv1.LabelManagedBy: flowv1.ManagedByValue}, Annotations: map[string]string{flowv1.AnnotationSource: "FlowSchema/left"}},
		Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: 5000,
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "apf-left"}}}
	notOurs := level("someone-elses", "")
	create(t, level("apf-left", "RequestPriority/left"))
	create(t, schema)
	create(t, notOurs)
	t.Cleanup(func() { remove(t, notOurs) })
	startOperator(t, operatorConfig{options: Options{Enforcement: EnforcementNone, Clock: realClock}})
	waitGone(t, schema)
	waitGone(t, level("apf-left", ""))
	create(t, level("apf-later", "RequestPriority/later"))
	waitGone(t, level("apf-later", ""))
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(notOurs), notOurs); err != nil {
		t.Errorf("a native level without the source annotation: %v", err)
	}
}
