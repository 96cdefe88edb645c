package controllers

import (
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

// setProjected sets the Projected condition from a view's projection and returns the native
// name for status; without projection (enforcement none) it removes the condition.
func setProjected(conditions *[]metav1.Condition, project bool, res native.Result, generation int64, now metav1.Time) string {
	if !project {
		meta.RemoveStatusCondition(conditions, flowv1.ConditionProjected)
		return ""
	}
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
