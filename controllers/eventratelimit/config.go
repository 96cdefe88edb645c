package eventratelimit

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// configReconciler hands every valid EventRateLimit object to the engine. It runs in every
// replica (not only the leader), because every replica serves the events webhook.
type configReconciler struct {
	client client.Reader
	engine *eventratelimit.Engine
}

func (r *configReconciler) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("eventratelimit-config").
		For(&flowv1.EventRateLimit{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false), MaxConcurrentReconciles: 1}).
		Complete(r)
}

// Reconcile rebuilds the engine's configuration from all objects, whichever one changed: the
// engine keeps the buckets of objects whose generation did not change.
func (r *configReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (ctrl.Result, error) {
	var list flowv1.EventRateLimitList
	if err := r.client.List(ctx, &list); err != nil {
		return ctrl.Result{}, err
	}
	configs := enforced(list.Items)
	r.engine.Update(configs)
	logf.FromContext(ctx).V(1).Info("EventRateLimit configuration updated", "enforced", len(configs), "objects", len(list.Items))
	return ctrl.Result{}, nil
}

// enforced returns the valid objects as engine configurations, by name. An
// invalid one (stored while no webhook answered) is left out; its status says why.
func enforced(items []flowv1.EventRateLimit) []eventratelimit.Config {
	configs := make([]eventratelimit.Config, 0, len(items))
	for i := range items {
		o := &items[i]
		if o.DeletionTimestamp != nil || len(validation.EventRateLimitSpec(&o.Spec, field.NewPath("spec"))) > 0 {
			continue
		}
		configs = append(configs, eventratelimit.Config{Name: o.Name, Generation: o.Generation, Spec: *o.Spec.DeepCopy()})
	}
	sort.Slice(configs, func(i, j int) bool { return configs[i].Name < configs[j].Name })
	return configs
}
