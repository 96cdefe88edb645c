package controllers

import (
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// levelUpToDate reports whether the cluster's native level is the desired one: owned, with
// the source annotation and the desired spec (the operator's label and annotation may sit
// beside others; other metadata is not the operator's).
func levelUpToDate(desired, live *flowcontrolv1.PriorityLevelConfiguration) bool {
	return live != nil && metadataUpToDate(&desired.ObjectMeta, &live.ObjectMeta) &&
		equality.Semantic.DeepEqual(desired.Spec, live.Spec)
}

// schemaUpToDate is levelUpToDate for FlowSchemas.
func schemaUpToDate(desired, live *flowcontrolv1.FlowSchema) bool {
	return live != nil && metadataUpToDate(&desired.ObjectMeta, &live.ObjectMeta) &&
		equality.Semantic.DeepEqual(desired.Spec, live.Spec)
}

func metadataUpToDate(desired, live *metav1.ObjectMeta) bool {
	for k, v := range desired.Labels {
		if live.Labels[k] != v {
			return false
		}
	}
	for k, v := range desired.Annotations {
		if live.Annotations[k] != v {
			return false
		}
	}
	return true
}

// projectionOf returns the Projected condition's content for one object from the snapshot:
// the plan's result, confirmed by the cluster (Projected=True only once the native object
// holds the plan, reason Pending until then).
func projectionOf(snap *snapshot, res native.Result, isLevel bool) native.Result {
	if !res.Projected || res.NativeName == native.ExemptLevelName {
		return res
	}
	plcs, fss := byName(snap.natives)
	live := false
	if isLevel {
		live = levelUpToDate(findLevel(snap.plan, res.NativeName), plcs[res.NativeName])
	} else {
		live = schemaUpToDate(findSchema(snap.plan, res.NativeName), fss[res.NativeName])
	}
	if live {
		return res
	}
	return native.Result{Reason: flowv1.ReasonPending, NativeName: res.NativeName, Message: fmt.Sprintf(
		"the native object %s is being written; if this lasts, see the Warning events of this object and the "+
			"operator's logs", res.NativeName)}
}

func findLevel(plan *native.Plan, name string) *flowcontrolv1.PriorityLevelConfiguration {
	for i := range plan.PriorityLevels {
		if plan.PriorityLevels[i].Name == name {
			return &plan.PriorityLevels[i]
		}
	}
	return nil
}

func findSchema(plan *native.Plan, name string) *flowcontrolv1.FlowSchema {
	for i := range plan.FlowSchemas {
		if plan.FlowSchemas[i].Name == name {
			return &plan.FlowSchemas[i]
		}
	}
	return nil
}

// setProjected sets the Projected condition and returns the native name for status; with no
// plan (enforcement none) it removes the condition.
func setProjected(conditions *[]metav1.Condition, snap *snapshot, res native.Result, found, isLevel bool,
	generation int64, now metav1.Time) string {
	if snap.plan == nil {
		meta.RemoveStatusCondition(conditions, flowv1.ConditionProjected)
		return ""
	}
	if !found {
		res = native.Result{Reason: flowv1.ReasonNotInEffect, Message: "not projected: the object is not in effect"}
	}
	res = projectionOf(snap, res, isLevel)
	status := metav1.ConditionFalse
	if res.Projected {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(conditions, metav1.Condition{
		Type: flowv1.ConditionProjected, Status: status, Reason: res.Reason, Message: res.Message,
		ObservedGeneration: generation, LastTransitionTime: now,
	})
	if !res.Projected {
		return ""
	}
	return res.NativeName
}
