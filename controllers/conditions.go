package controllers

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

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
// when it became True, Warning when it became False. A new object's first Ready=True is not
// announced: it is what every valid object does, and in a bulk apply from Git its events would
// be a third of the operator's writes; its status says it (docs/configuration.md).
func announceReady(rec events.EventRecorder, obj runtime.Object, before, after []metav1.Condition) {
	old := meta.FindStatusCondition(before, flowv1.ConditionReady)
	now := meta.FindStatusCondition(after, flowv1.ConditionReady)
	switch {
	case now == nil, old != nil && old.Status == now.Status && old.Reason == now.Reason:
		return
	case old == nil && now.Status == metav1.ConditionTrue:
		return
	}
	eventType := corev1.EventTypeNormal
	if now.Status != metav1.ConditionTrue {
		eventType = corev1.EventTypeWarning
	}
	rec.Eventf(obj, nil, eventType, now.Reason, "UpdateStatus", "Ready=%s: %s", now.Status, now.Message)
}
