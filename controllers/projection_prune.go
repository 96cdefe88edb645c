package controllers

import (
	"context"
	"errors"
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/controllers/internal/nativewrite"
	"github.com/apf-operator/apf-operator/internal/native"
)

// pruneKey is the one request the native pruner handles.
var pruneKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "apf-native-prune"}}

// nativePruner runs with enforcement none: it deletes the native objects the operator owns
// (native.Owned: managed-by label and source annotation), left by an earlier run with
// enforcement native, and restores the levels it carved shares from (native.RestoreDonor), once at start and whenever an owned one appears or changes. Otherwise
// kube-apiserver would keep enforcing a configuration the user switched off.
type nativePruner struct {
	client client.Client
}

func (p *nativePruner) setup(mgr manager.Manager) error {
	owned := predicate.NewPredicateFuncs(func(obj client.Object) bool { return native.Owned(obj) })
	ownedOrDonor := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		plc, ok := obj.(*flowcontrolv1.PriorityLevelConfiguration)
		return native.Owned(obj) || ok && native.IsDonor(plc)
	})
	toKey := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{pruneKey}
	})
	return ctrl.ControllerManagedBy(mgr).
		Named("apf-native-prune").
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Watches(&flowcontrolv1.FlowSchema{}, toKey, ctrl.WithPredicates(owned)).
		Watches(&flowcontrolv1.PriorityLevelConfiguration{}, toKey, ctrl.WithPredicates(ownedOrDonor)).
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.Add(pruneKey)
			return nil
		})).
		Complete(p)
}

// Reconcile deletes the owned native FlowSchemas, then the owned levels, so that no owned
// FlowSchema is left referring to a deleted level, then restores the levels it carved from.
func (p *nativePruner) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	owned := client.MatchingLabels{flowv1.LabelManagedBy: flowv1.ManagedByValue}
	var fss flowcontrolv1.FlowSchemaList
	if err := p.client.List(ctx, &fss, owned); err != nil {
		return reconcile.Result{}, err
	}
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err := p.client.List(ctx, &plcs, owned); err != nil {
		return reconcile.Result{}, err
	}
	var errs []error
	for i := range fss.Items {
		errs = append(errs, p.delete(ctx, &fss.Items[i]))
	}
	if err := errors.Join(errs...); err != nil {
		return reconcile.Result{}, err
	}
	for i := range plcs.Items {
		errs = append(errs, p.delete(ctx, &plcs.Items[i]))
	}
	var all flowcontrolv1.PriorityLevelConfigurationList // donors carry no label of ours
	if err := p.client.List(ctx, &all); err != nil {
		return reconcile.Result{}, errors.Join(append(errs, err)...)
	}
	errs = append(errs, restoreDonors(ctx, p.client, all.Items)...)
	return reconcile.Result{}, errors.Join(errs...)
}

// delete removes one owned native object, only if it is still the version listed
// (nativewrite.Delete: the operator's names, label and annotation, UID and resourceVersion).
func (p *nativePruner) delete(ctx context.Context, obj client.Object) error {
	deleted, err := nativewrite.Delete(ctx, p.client, obj)
	if err != nil {
		return fmt.Errorf("deleting %s %s: %w", native.KindOf(obj), obj.GetName(), err)
	}
	if deleted {
		logf.FromContext(ctx).Info("Deleted native object: enforcement is none", "kind", native.KindOf(obj),
			"name", obj.GetName(), "source", obj.GetAnnotations()[flowv1.AnnotationSource])
	}
	return nil
}
