package reconcileutil

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// SetReady sets the Ready condition from an effective status. The transition time is now only
// when the condition's status changes; otherwise the stored one is kept, so an unchanged
// status compares equal and is not written.
func SetReady(conditions *[]metav1.Condition, st effective.Status, generation int64, now metav1.Time) {
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

// AnnounceReady emits an event when the Ready condition changed its status or reason: Normal
// when it became True, Warning when it became False. A new object's first Ready=True is not
// announced: it is what every valid object does, and in a bulk apply from Git its events would
// be a third of the operator's writes; its status says it (docs/configuration.md).
func AnnounceReady(rec events.EventRecorder, obj runtime.Object, before, after []metav1.Condition) {
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

// SetStalledReconciling derives kstatus's abnormal-true conditions from Ready and Projected
// (call it after both are set): Stalled while the object cannot take effect without a change
// by the user (Ready False, or Projected False for any reason but Pending), Reconciling while
// the native object is being written. Each is absent otherwise. kstatus (Flux, kpt) reads a
// False Ready alone as InProgress, which would leave a duplicate level "in progress" until a
// timeout; with Stalled it reports Failed at once, with the reason and message.
func SetStalledReconciling(conditions *[]metav1.Condition, generation int64, now metav1.Time) {
	stalled, reconciling := stalledReconcilingCause(*conditions)
	setAbnormalTrue(conditions, flowv1.ConditionStalled, stalled, generation, now)
	setAbnormalTrue(conditions, flowv1.ConditionReconciling, reconciling, generation, now)
}

// stalledReconcilingCause returns copies of the condition that makes the object stalled and of
// the one that makes it reconciling (nil: none).
func stalledReconcilingCause(conditions []metav1.Condition) (stalled, reconciling *metav1.Condition) {
	if ready := meta.FindStatusCondition(conditions, flowv1.ConditionReady); ready != nil && ready.Status == metav1.ConditionFalse {
		c := *ready
		return &c, nil
	}
	projected := meta.FindStatusCondition(conditions, flowv1.ConditionProjected)
	if projected == nil || projected.Status != metav1.ConditionFalse {
		return nil, nil
	}
	c := *projected
	switch c.Reason {
	case flowv1.ReasonPending:
		return nil, &c
	case flowv1.ReasonShadowedByNative:
		return nil, nil // withheld on purpose: nothing for the user to fix
	}
	return &c, nil
}

// setAbnormalTrue sets condition type t to True with the cause's reason and message, or
// removes it when cause is nil.
func setAbnormalTrue(conditions *[]metav1.Condition, t string, cause *metav1.Condition, generation int64, now metav1.Time) {
	if cause == nil {
		meta.RemoveStatusCondition(conditions, t)
		return
	}
	meta.SetStatusCondition(conditions, metav1.Condition{
		Type: t, Status: metav1.ConditionTrue, Reason: cause.Reason, Message: cause.Message,
		ObservedGeneration: generation, LastTransitionTime: now,
	})
}
