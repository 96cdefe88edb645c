package controllers

import (
	"context"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// conflictRetry is how soon a status write that lost to a newer object version is retried,
// once the cache has caught up.
const conflictRetry = 200 * time.Millisecond

// statusWorkers is how many objects of one kind the status reconcilers handle at once: after
// a bulk apply, thousands of statuses are written, each a round trip to the API server.
const statusWorkers = 4

// requestPriorityReconciler writes the status of RequestPriority objects.
type requestPriorityReconciler struct {
	client    client.Client
	recorder  events.EventRecorder
	clock     clock.PassiveClock
	snapshots *snapshotHolder
}

// setup watches the objects themselves (their status writes included: Reconcile compares with
// the cached status, which may not hold a previous write yet, so a status computed from an
// older snapshot is corrected once that write reaches the cache) and the snapshots, which
// enqueue the objects whose view changed: what else a status depends on (duplicate levels, the
// sum of shares, the FlowSchemas that name it, its native object) reaches it that way.
func (r *requestPriorityReconciler) setup(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("requestpriority-status").
		WithOptions(controller.Options{MaxConcurrentReconciles: statusWorkers}).
		For(&flowv1.RequestPriority{}).
		WatchesRawSource(r.snapshots.source(func(old, cur *snapshot) []string {
			return toEnqueue(old, cur, old.rpViews(), cur.rps)
		}))
	if r.snapshots.project {
		b = b.Watches(&flowcontrolv1.PriorityLevelConfiguration{}, toSource(native.KindRequestPriority), nativeChanges)
	}
	return b.Complete(r)
}

// Reconcile computes the object's status from the current snapshot and writes it only when it
// changed.
func (r *requestPriorityReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var rp flowv1.RequestPriority
	if err := r.client.Get(ctx, req.NamespacedName, &rp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	snap := r.snapshots.get()
	view, current := snap.currentView(snap.rpViews(), &rp)
	if !current {
		return ctrl.Result{}, nil // the snapshot of this version enqueues it
	}
	view = confirmRequestPriority(ctx, r.client, snap, rp.Name, view)
	if wait := r.snapshots.projectionWait(view); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	now := metav1.NewTime(r.clock.Now())
	desired := requestPriorityStatus(&rp, view.status, now)
	desired.NativeName = setProjected(&desired.Conditions, snap.plan != nil, view.projection, rp.Generation, now)
	desired.NativeNominalSeats = view.nativeSeats
	desired.Observed = observedStatus(rp.Status.Observed, view)
	setStalledReconciling(&desired.Conditions, rp.Generation, now)
	if equality.Semantic.DeepEqual(rp.Status, desired) {
		return ctrl.Result{}, nil
	}
	write := statusWrite{first: rp.Status.ObservedGeneration == 0, figuresOnly: onlyFiguresDiffer(&rp.Status, desired)}
	if deferred, requeue := r.snapshots.deferred(snap, &rp, write); deferred {
		return ctrl.Result{RequeueAfter: requeue}, nil
	}
	before := rp.Status.Conditions
	rp.Status = desired
	if err := r.client.Status().Update(ctx, &rp); err != nil {
		return statusWriteResult(err)
	}
	logf.FromContext(ctx).V(1).Info("Updated status", "generation", rp.Generation)
	announceReady(r.recorder, &rp, before, desired.Conditions)
	return ctrl.Result{}, nil
}

// onlyFiguresDiffer reports whether desired differs from the stored status only in its derived
// figures (FlowSchemas, AssuredConcurrencyFraction, NativeNominalSeats, Observed) of a status
// already written.
func onlyFiguresDiffer(stored *flowv1.RequestPriorityStatus, desired flowv1.RequestPriorityStatus) bool {
	if stored.ObservedGeneration == 0 {
		return false
	}
	desired.FlowSchemas, desired.AssuredConcurrencyFraction = stored.FlowSchemas, stored.AssuredConcurrencyFraction
	desired.NativeNominalSeats, desired.Observed = stored.NativeNominalSeats, stored.Observed
	return equality.Semantic.DeepEqual(*stored, desired)
}

// statusWriteResult turns a failed status write into a result: a conflict means the cache was
// behind and is retried shortly; a vanished object needs nothing.
func statusWriteResult(err error) (ctrl.Result, error) {
	switch {
	case apierrors.IsConflict(err):
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	default:
		return ctrl.Result{}, err
	}
}
