package defaults

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/controllers/internal/reconcileutil"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

// clusterKey is the one request the defaults reconciler handles: every event maps to it, so
// the decision is always taken over the whole cluster.
var clusterKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "apf-defaults"}}

// reconciler keeps the default objects present and repaired.
type reconciler struct {
	client   client.Client
	recorder events.EventRecorder
	// set is the defaults (the same in every enforcement mode).
	set     defaults.Set
	metrics *Metrics
	resync  time.Duration
	// pending holds the writes the cache has not shown yet; blocked the blocked objects already
	// reported, by kind/name. Both are touched by one worker only, pending also by event
	// handlers.
	pending *reconcileutil.Expectations
	blocked map[string]string
}

func newReconciler(c client.Client, rec events.EventRecorder, m *Metrics, opts Options) *reconciler {
	return &reconciler{client: c, recorder: rec, set: defaults.For(opts.Enforcement), metrics: m, resync: opts.ResyncPeriod,
		pending: reconcileutil.NewExpectations(reconcileutil.ExpectationTimeout, opts.Clock), blocked: map[string]string{}}
}

// setup watches both kinds (creations, deletions and changes of spec, labels or annotations,
// not status-only updates) and enqueues clusterKey once at start, so an empty cluster is
// filled without waiting for an event.
func (r *reconciler) setup(mgr ctrl.Manager) error {
	changed := builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
		predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))
	toKey := handler.EnqueueRequestsFromMapFunc(r.observe)
	return ctrl.NewControllerManagedBy(mgr).
		Named("apf-defaults").
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Watches(&flowv1.RequestPriority{}, toKey, changed).
		Watches(&flowv1.FlowSchema{}, toKey, changed).
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.Add(clusterKey)
			return nil
		})).
		Complete(r)
}

// observe maps every event to clusterKey and marks the operator's own writes as seen.
func (r *reconciler) observe(_ context.Context, obj client.Object) []reconcile.Request {
	r.pending.Observe(obj)
	return []reconcile.Request{clusterKey}
}

// Reconcile plans from the cache and carries out the plan. It waits until the cache shows the
// operator's previous writes, so that it never decides on a view that predates them.
func (r *reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (ctrl.Result, error) {
	if wait := r.pending.Wait(); wait > 0 {
		logf.FromContext(ctx).V(1).Info("Waiting for the cache to show the operator's writes", "timeout", wait)
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	var rps flowv1.RequestPriorityList
	if err := r.client.List(ctx, &rps); err != nil {
		return ctrl.Result{}, err
	}
	var fss flowv1.FlowSchemaList
	if err := r.client.List(ctx, &fss); err != nil {
		return ctrl.Result{}, err
	}
	actions := r.set.Plan(rps.Items, fss.Items)
	r.reportBlocked(ctx, actions.Blocked, rps.Items, fss.Items)
	if err := r.apply(ctx, actions); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.resync}, nil
}
