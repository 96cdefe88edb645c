package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// effectiveFromCache computes the effective configuration of the objects in the cache.
func effectiveFromCache(ctx context.Context, c client.Reader) (*effective.Config, error) {
	var rps flowv1.RequestPriorityList
	if err := c.List(ctx, &rps); err != nil {
		return nil, err
	}
	var fss flowv1.FlowSchemaList
	if err := c.List(ctx, &fss); err != nil {
		return nil, err
	}
	return effective.Compute(rps.Items, fss.Items), nil
}

// setReady sets the Ready condition from an effective status. The transition time is now only
// when the condition's status changes; otherwise the stored one is kept, so an unchanged
// status compares equal and is not written.
func setReady(conditions *[]metav1.Condition, st effective.Status, generation int64, now metav1.Time) {
	status := metav1.ConditionFalse
	if st.InEffect {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(conditions, metav1.Condition{
		Type:               flowv1.ConditionReady,
		Status:             status,
		Reason:             st.Reason,
		Message:            st.Message,
		ObservedGeneration: generation,
		LastTransitionTime: now,
	})
}

// announceReady emits an event when the Ready condition changed its status or reason: Normal
// when it became True, Warning when it became False.
func announceReady(rec events.EventRecorder, obj runtime.Object, before, after []metav1.Condition) {
	old := meta.FindStatusCondition(before, flowv1.ConditionReady)
	now := meta.FindStatusCondition(after, flowv1.ConditionReady)
	if now == nil || (old != nil && old.Status == now.Status && old.Reason == now.Reason) {
		return
	}
	eventType := corev1.EventTypeNormal
	if now.Status != metav1.ConditionTrue {
		eventType = corev1.EventTypeWarning
	}
	rec.Eventf(obj, nil, eventType, now.Reason, "UpdateStatus", "Ready=%s: %s", now.Status, now.Message)
}
