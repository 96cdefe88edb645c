package controllers

import (
	"context"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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

// flowSchemaReconciler writes the status of FlowSchema objects.
type flowSchemaReconciler struct {
	client    client.Client
	recorder  events.EventRecorder
	clock     clock.PassiveClock
	snapshots *snapshotHolder
}

// setup watches the objects themselves and the snapshots, for the reasons
// requestPriorityReconciler.setup gives: whether the RequestPriority it names exists, is in
// effect, is a backstop, takes a distinguisher, and its native object reach it through the
// snapshot's views.
func (r *flowSchemaReconciler) setup(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named("flowschema-status").
		WithOptions(controller.Options{MaxConcurrentReconciles: statusWorkers}).
		For(&flowv1.FlowSchema{}).
		WatchesRawSource(r.snapshots.source(func(old, cur *snapshot) []string {
			return toEnqueue(old, cur, old.fsViews(), cur.fss)
		}))
	if r.snapshots.project {
		b = b.Watches(&flowcontrolv1.FlowSchema{}, toSource(native.KindFlowSchema), nativeChanges)
	}
	return b.Complete(r)
}

// Reconcile computes the object's status from the current snapshot and writes it only when it
// changed.
func (r *flowSchemaReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var fs flowv1.FlowSchema
	if err := r.client.Get(ctx, req.NamespacedName, &fs); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	snap := r.snapshots.get()
	view, current := snap.currentView(snap.fsViews(), &fs)
	if !current {
		return ctrl.Result{}, nil // the snapshot of this version enqueues it
	}
	view = confirmFlowSchema(ctx, r.client, snap, fs.Name, view)
	if wait := r.snapshots.projectionWait(view); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	now := metav1.NewTime(r.clock.Now())
	desired := flowSchemaStatus(&fs, view.status, now)
	desired.NativeName = setProjected(&desired.Conditions, snap.plan != nil, view.projection, fs.Generation, now)
	desired.Observed = observedStatus(fs.Status.Observed, view)
	setStalledReconciling(&desired.Conditions, fs.Generation, now)
	if equality.Semantic.DeepEqual(fs.Status, desired) {
		return ctrl.Result{}, nil
	}
	write := statusWrite{first: fs.Status.ObservedGeneration == 0, figuresOnly: onlyObservedDiffers(&fs.Status, desired),
		danglingReference: view.status.Reason == flowv1.ReasonRequestPriorityNotFound}
	if deferred, requeue := r.snapshots.deferred(snap, &fs, write); deferred {
		return ctrl.Result{RequeueAfter: requeue}, nil
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

// onlyObservedDiffers reports whether desired differs from the stored status only in its
// summary of kube-apiserver's rejections, a derived figure, of a status already written.
func onlyObservedDiffers(stored *flowv1.FlowSchemaStatus, desired flowv1.FlowSchemaStatus) bool {
	if stored.ObservedGeneration == 0 {
		return false
	}
	desired.Observed = stored.Observed
	return equality.Semantic.DeepEqual(*stored, desired)
}
