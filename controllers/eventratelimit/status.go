package eventratelimit

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
	"github.com/apf-operator/apf-operator/controllers/internal/reconcileutil"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// statusReconciler writes the status of EventRateLimit objects (leader only): Ready, the
// observed generation and the leader replica's counts.
type statusReconciler struct {
	client   client.Client
	recorder events.EventRecorder
	clock    clock.PassiveClock
	// engine is nil when the events webhook is off.
	engine *eventratelimit.Engine
	period time.Duration
}

func (r *statusReconciler) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("eventratelimit-status").
		For(&flowv1.EventRateLimit{}).
		Complete(r)
}

// Reconcile computes the status and writes it only when it changed; while the object is
// enforced it comes back every period to refresh the counts.
func (r *statusReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var o flowv1.EventRateLimit
	if err := r.client.Get(ctx, req.NamespacedName, &o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	desired, requeue := r.desiredStatus(&o)
	result := ctrl.Result{RequeueAfter: requeue}
	if equality.Semantic.DeepEqual(o.Status, desired) {
		return result, nil
	}
	before := o.Status.Conditions
	o.Status = desired
	if err := r.client.Status().Update(ctx, &o); err != nil {
		return reconcileutil.StatusWriteResult(err)
	}
	reconcileutil.AnnounceReady(r.recorder, &o, before, desired.Conditions)
	return result, nil
}

// engineLagRetry is how soon the status is computed again when the engine does not enforce
// the object's generation yet (the config reconciler runs in parallel).
const engineLagRetry = 200 * time.Millisecond

// desiredStatus returns the object's status and when to compute it again (zero: on the next
// change only). While the engine has not caught up with the object's generation, the status is
// left as it is, so that observedGeneration == generation always means the counts are this
// generation's.
func (r *statusReconciler) desiredStatus(o *flowv1.EventRateLimit) (flowv1.EventRateLimitStatus, time.Duration) {
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
	reconcileutil.SetStalledReconciling(&st.Conditions, o.Generation, cond.LastTransitionTime)
	if cond.Status != metav1.ConditionTrue {
		st.AcceptedEvents, st.RejectedEvents, st.CountingSince = 0, 0, nil
		return st, 0
	}
	counts, ok := r.engine.Counts(o.Name)
	if !ok || counts.Generation != o.Generation {
		return *o.Status.DeepCopy(), engineLagRetry
	}
	if counts.Accepted+counts.Rejected == 0 && o.Status.ObservedGeneration == o.Generation && o.Status.CountingSince != nil {
		// Nothing counted since this replica started enforcing this generation: keep the last
		// written counts, so that an idle restart writes nothing.
		return st, r.period
	}
	st.AcceptedEvents, st.RejectedEvents = counts.Accepted, counts.Rejected
	since := metav1.NewTime(counts.Since.Truncate(time.Second))
	st.CountingSince = &since
	return st, r.period
}
