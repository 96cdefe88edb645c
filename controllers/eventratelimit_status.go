package controllers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// DefaultEventRateLimitStatusPeriod is how often the counts of an EventRateLimit's status are
// refreshed while events flow: the status is written at most this often, never per event.
const DefaultEventRateLimitStatusPeriod = 10 * time.Second

// eventRateLimitStatus writes the status of EventRateLimit objects (leader only): Ready, the
// observed generation and the leader replica's counts.
type eventRateLimitStatus struct {
	client   client.Client
	recorder events.EventRecorder
	clock    clock.PassiveClock
	// engine is nil when the events webhook is off.
	engine *eventratelimit.Engine
	period time.Duration
}

func (r *eventRateLimitStatus) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("eventratelimit-status").
		For(&flowv1.EventRateLimit{}).
		Complete(r)
}

// Reconcile computes the status and writes it only when it changed; while the object is
// enforced it comes back every period to refresh the counts.
func (r *eventRateLimitStatus) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var o flowv1.EventRateLimit
	if err := r.client.Get(ctx, req.NamespacedName, &o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	desired, enforced := r.desiredStatus(&o)
	result := ctrl.Result{}
	if enforced {
		result.RequeueAfter = r.period
	}
	if equality.Semantic.DeepEqual(o.Status, desired) {
		return result, nil
	}
	before := o.Status.Conditions
	o.Status = desired
	if err := r.client.Status().Update(ctx, &o); err != nil {
		return statusWriteResult(err)
	}
	announceReady(r.recorder, &o, before, desired.Conditions)
	return result, nil
}

// desiredStatus returns the object's status and whether the engine enforces its generation
// (false while the config reconciler has not caught up; the next period retries).
func (r *eventRateLimitStatus) desiredStatus(o *flowv1.EventRateLimit) (flowv1.EventRateLimitStatus, bool) {
	st := *o.Status.DeepCopy()
	st.ObservedGeneration = o.Generation
	cond := metav1.Condition{Type: flowv1.ConditionReady, Status: metav1.ConditionTrue, Reason: flowv1.ReasonAccepted,
		Message: "the limits are enforced on event creation", ObservedGeneration: o.Generation,
		LastTransitionTime: metav1.NewTime(r.clock.Now())}
	errs := validation.EventRateLimitSpec(&o.Spec, field.NewPath("spec"))
	switch {
	case len(errs) > 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, flowv1.ReasonInvalidSpec, errs.ToAggregate().Error()
	case r.engine == nil:
		cond.Status, cond.Reason = metav1.ConditionFalse, flowv1.ReasonEnforcementDisabled
		cond.Message = "the operator runs without the events webhook (--enable-event-rate-limit=false)"
	}
	meta.SetStatusCondition(&st.Conditions, cond)
	if cond.Status != metav1.ConditionTrue {
		st.AcceptedEvents, st.RejectedEvents, st.CountingSince = 0, 0, nil
		return st, false
	}
	counts, ok := r.engine.Counts(o.Name)
	if !ok || counts.Generation != o.Generation {
		return st, true
	}
	st.AcceptedEvents, st.RejectedEvents = counts.Accepted, counts.Rejected
	since := metav1.NewTime(counts.Since.Truncate(time.Second))
	st.CountingSince = &since
	return st, true
}
