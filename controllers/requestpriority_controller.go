package controllers

import (
	"context"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// conflictRetry is how soon a status write that lost to a newer object version is retried,
// once the cache has caught up.
const conflictRetry = 200 * time.Millisecond

// requestPriorityReconciler writes the status of RequestPriority objects.
type requestPriorityReconciler struct {
	client    client.Client
	recorder  events.EventRecorder
	clock     clock.PassiveClock
	snapshots *snapshots
}

// setup watches what a RequestPriority's status depends on: every RequestPriority (duplicate
// levels, the sum of shares) and the FlowSchemas that name it. Status-only updates do not
// change the generation and so do not trigger the others; they do trigger the object itself,
// for the reason flowSchemaReconciler.setup gives.
func (r *requestPriorityReconciler) setup(mgr ctrl.Manager, project bool) error {
	specChanged := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	b := ctrl.NewControllerManagedBy(mgr).
		Named("requestpriority-status").
		Watches(&flowv1.RequestPriority{}, handler.EnqueueRequestsFromMapFunc(r.allRequestPriorities), specChanged).
		Watches(&flowv1.RequestPriority{}, &handler.EnqueueRequestForObject{}).
		Watches(&flowv1.FlowSchema{}, handler.EnqueueRequestsFromMapFunc(namedRequestPriority), specChanged)
	if project {
		b = b.Watches(&flowcontrolv1.PriorityLevelConfiguration{},
			handler.EnqueueRequestsFromMapFunc(nativeSource(native.KindRequestPriority)))
	}
	return b.Complete(r)
}

func (r *requestPriorityReconciler) allRequestPriorities(ctx context.Context, _ client.Object) []reconcile.Request {
	var rps flowv1.RequestPriorityList
	if err := r.client.List(ctx, &rps); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(rps.Items))
	for i := range rps.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: rps.Items[i].Name}})
	}
	return out
}

// namedRequestPriority maps a FlowSchema to the RequestPriority it names (called with the old
// and the new object on an update, so both counts are refreshed).
func namedRequestPriority(_ context.Context, obj client.Object) []reconcile.Request {
	fs := obj.(*flowv1.FlowSchema)
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: fs.Spec.RequestPriority.Name}}}
}

// Reconcile computes the object's status from the effective configuration and writes it only
// when it changed.
func (r *requestPriorityReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var rp flowv1.RequestPriority
	if err := r.client.Get(ctx, req.NamespacedName, &rp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	snap, err := r.snapshots.get(ctx, r.client)
	if err != nil {
		return ctrl.Result{}, err
	}
	cfg := snap.cfg
	st, listed := cfg.RequestPriorityStatus[rp.Name]
	if !listed {
		return ctrl.Result{}, nil // deleted since the Get: its event follows
	}
	now := metav1.NewTime(r.clock.Now())
	desired := requestPriorityStatus(&rp, st, now)
	res, found := snap.rpResult(rp.Name)
	desired.NativeName = setProjected(&desired.Conditions, snap, res, found, true, rp.Generation, now)
	if equality.Semantic.DeepEqual(rp.Status, desired) {
		return ctrl.Result{}, nil
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
