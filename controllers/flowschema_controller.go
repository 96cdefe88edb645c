package controllers

import (
	"context"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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

// flowSchemaReconciler writes the status of FlowSchema objects.
type flowSchemaReconciler struct {
	client    client.Client
	recorder  events.EventRecorder
	clock     clock.PassiveClock
	snapshots *snapshots
}

// setup watches what a FlowSchema's status depends on: its own spec and every
// RequestPriority (whether the one it names exists, is in effect, is a backstop, and takes a
// distinguisher). Other FlowSchemas do not matter. Every update of the FlowSchema itself
// triggers it, its own status writes included: Reconcile compares with the cached status, which
// may not hold its previous write yet, so a status computed from an older snapshot and written
// after a newer pass found nothing to change (Projected Pending, then True again after the
// native object is restored) is corrected once that write reaches the cache.
func (r *flowSchemaReconciler) setup(mgr ctrl.Manager, project bool) error {
	specChanged := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	b := ctrl.NewControllerManagedBy(mgr).
		Named("flowschema-status").
		For(&flowv1.FlowSchema{}).
		Watches(&flowv1.RequestPriority{}, handler.EnqueueRequestsFromMapFunc(r.allFlowSchemas), specChanged)
	if project {
		// Other FlowSchemas matter through the projection's precedences only, which status
		// does not show; their native objects do: a conflict, or the write of this one.
		b = b.Watches(&flowcontrolv1.FlowSchema{}, handler.EnqueueRequestsFromMapFunc(nativeSource(native.KindFlowSchema)))
	}
	return b.Complete(r)
}

func (r *flowSchemaReconciler) allFlowSchemas(ctx context.Context, _ client.Object) []reconcile.Request {
	var fss flowv1.FlowSchemaList
	if err := r.client.List(ctx, &fss); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(fss.Items))
	for i := range fss.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: fss.Items[i].Name}})
	}
	return out
}

// Reconcile computes the object's status from the effective configuration and writes it only
// when it changed.
func (r *flowSchemaReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var fs flowv1.FlowSchema
	if err := r.client.Get(ctx, req.NamespacedName, &fs); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	snap, err := r.snapshots.get(ctx, r.client)
	if err != nil {
		return ctrl.Result{}, err
	}
	cfg := snap.cfg
	st, listed := cfg.FlowSchemaStatus[fs.Name]
	if !listed {
		return ctrl.Result{}, nil // deleted since the Get: its event follows
	}
	now := metav1.NewTime(r.clock.Now())
	desired := flowSchemaStatus(&fs, st, now)
	res, found := snap.fsResult(fs.Name)
	desired.NativeName = setProjected(&desired.Conditions, snap, res, found, false, fs.Generation, now)
	if equality.Semantic.DeepEqual(fs.Status, desired) {
		return ctrl.Result{}, nil
	}
	before := fs.Status.Conditions
	fs.Status = desired
	if err := r.client.Status().Update(ctx, &fs); err != nil {
		return statusWriteResult(err)
	}
	logf.FromContext(ctx).V(1).Info("Updated status", "generation", fs.Generation)
	announceReady(r.recorder, &fs, before, desired.Conditions)
	return ctrl.Result{}, nil
}
