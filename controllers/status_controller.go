package controllers

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/apf-operator/apf-operator/controllers/internal/reconcileutil"
)

// The status reconcilers read both kinds through the cache and write their status with an
// update (optimistic concurrency).
// +kubebuilder:rbac:groups=flowcontrol.apf-operator.io,resources=requestpriorities;flowschemas,verbs=get;list;watch
// +kubebuilder:rbac:groups=flowcontrol.apf-operator.io,resources=requestpriorities/status;flowschemas/status,verbs=update

// statusWorkers is how many objects of one kind the status reconcilers handle at once: after
// a bulk apply, thousands of statuses are written, each a round trip to the API server.
const statusWorkers = 4

// statusKind is what the status reconciler needs to know of one kind (requestPriorityKind,
// flowSchemaKind): the rest is the same for both.
type statusKind[O client.Object] struct {
	// name is the controller's name.
	name string
	// newObject returns an empty object of the kind.
	newObject func() O
	// native is an empty object of the native kind the objects are projected onto, and
	// nativeKind the kind its source annotation names (native.Source).
	native     client.Object
	nativeKind string
	// views returns the snapshot's views of the objects of the kind (snap may be nil).
	views func(snap *snapshot) map[string]objectView
	// confirm returns the view with its projection confirmed from the cache (confirmFlowSchema).
	confirm func(ctx context.Context, c client.Reader, snap *snapshot, name string, v objectView) objectView
	// nextStatus sets obj's status to the one v gives it at now (project: enforcement native)
	// and describes the change; false when the status is already that one.
	nextStatus func(obj O, v objectView, project bool, now metav1.Time) (statusChange, bool)
}

// statusChange describes a status about to be written: the Ready conditions before and after
// (for the events) and what deferred needs to know.
type statusChange struct {
	before, after []metav1.Condition
	write         statusWrite
}

// statusReconciler writes the status of the objects of one kind from the shared snapshot.
type statusReconciler[O client.Object] struct {
	kind      statusKind[O]
	client    client.Client
	recorder  events.EventRecorder
	clock     clock.PassiveClock
	snapshots *snapshotHolder
}

// setup watches the objects themselves (their status writes included: Reconcile compares with
// the cached status, which may not hold a previous write yet, so a status computed from an
// older snapshot is corrected once that write reaches the cache) and the snapshots, which
// enqueue the objects whose view changed: what else a status depends on (a RequestPriority's
// duplicate levels, the sum of shares and the FlowSchemas that name it; whether the
// RequestPriority a FlowSchema names exists, is in effect, is a backstop, takes a
// distinguisher; the native object) reaches it that way. With enforcement native it also
// watches the native objects, to confirm a pending projection (projection_confirm.go).
func (r *statusReconciler[O]) setup(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).
		Named(r.kind.name).
		WithOptions(controller.Options{MaxConcurrentReconciles: statusWorkers}).
		For(r.kind.newObject()).
		WatchesRawSource(r.snapshots.source(func(old, cur *snapshot) []string {
			return toEnqueue(old, cur, r.kind.views(old), r.kind.views(cur))
		}))
	if r.snapshots.project {
		b = b.Watches(r.kind.native, toSource(r.kind.nativeKind), nativeChanges)
	}
	return b.Complete(r)
}

// Reconcile computes the object's status from the current snapshot and writes it only when it
// changed.
func (r *statusReconciler[O]) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	obj := r.kind.newObject()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	snap := r.snapshots.get()
	view, current := snap.currentView(r.kind.views(snap), obj)
	if !current {
		return ctrl.Result{}, nil // the snapshot of this version enqueues it
	}
	view = r.kind.confirm(ctx, r.client, snap, obj.GetName(), view)
	if wait := r.snapshots.projectionWait(view); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	change, changed := r.kind.nextStatus(obj, view, snap.plan != nil, metav1.NewTime(r.clock.Now()))
	if !changed {
		return ctrl.Result{}, nil
	}
	if deferred, requeue := r.snapshots.deferred(snap, obj, change.write); deferred {
		return ctrl.Result{RequeueAfter: requeue}, nil
	}
	if err := r.client.Status().Update(ctx, obj); err != nil {
		return reconcileutil.StatusWriteResult(err)
	}
	logf.FromContext(ctx).V(1).Info("Updated status", "generation", obj.GetGeneration())
	reconcileutil.AnnounceReady(r.recorder, obj, change.before, change.after)
	return ctrl.Result{}, nil
}
