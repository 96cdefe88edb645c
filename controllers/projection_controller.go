package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// projectionKey is the one request the projector handles: every event maps to it, so the
// native objects are always planned over the whole configuration.
var projectionKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "apf-projection"}}

// projector keeps kube-apiserver's native flowcontrol objects equal to the projection of the
// effective configuration (internal/native): it applies what differs with server-side apply
// (field manager native.FieldManager) and deletes the owned objects whose source is gone. It
// writes nothing when the cluster already holds the plan, and never touches a native object
// the operator does not own.
type projector struct {
	client    client.Client
	recorder  events.EventRecorder
	snapshots *snapshots
	metrics   *projectionMetrics
	pending   *expectations
}

// setup watches both of our kinds and both native kinds (any change: a user's edit of an
// owned native object is reverted, a deleted one re-created) and enqueues the key once at
// start.
func (p *projector) setup(mgr ctrl.Manager) error {
	toKey := handler.EnqueueRequestsFromMapFunc(p.observe)
	return ctrl.NewControllerManagedBy(mgr).
		Named("apf-projection").
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Watches(&flowv1.RequestPriority{}, toKey).
		Watches(&flowv1.FlowSchema{}, toKey).
		Watches(&flowcontrolv1.PriorityLevelConfiguration{}, toKey).
		Watches(&flowcontrolv1.FlowSchema{}, toKey).
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.Add(projectionKey)
			return nil
		})).
		Complete(p)
}

func (p *projector) observe(_ context.Context, obj client.Object) []reconcile.Request {
	p.pending.observe(obj)
	return []reconcile.Request{projectionKey}
}

// Reconcile applies the plan: levels before the schemas that refer to them, stale schemas
// before stale levels, so no native schema ever refers to a missing level of ours.
func (p *projector) Reconcile(ctx context.Context, _ reconcile.Request) (ctrl.Result, error) {
	if wait := p.pending.wait(); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	snap, err := p.snapshots.get(ctx, p.client)
	if err != nil {
		return ctrl.Result{}, err
	}
	plan := snap.plan
	p.metrics.record(plan)
	existingPLC, existingFS := byName(snap.natives)
	var errs []error
	for i := range plan.PriorityLevels {
		desired := &plan.PriorityLevels[i]
		if !levelUpToDate(desired, existingPLC[desired.Name]) {
			errs = append(errs, p.apply(ctx, desired, native.KindRequestPriority))
		}
	}
	for i := range plan.FlowSchemas {
		desired := &plan.FlowSchemas[i]
		if !schemaUpToDate(desired, existingFS[desired.Name]) {
			errs = append(errs, p.apply(ctx, desired, native.KindFlowSchema))
		}
	}
	for _, name := range plan.StaleFlowSchemas {
		errs = append(errs, p.delete(ctx, existingFS[name]))
	}
	for _, name := range plan.StalePriorityLevels {
		errs = append(errs, p.delete(ctx, existingPLC[name]))
	}
	return ctrl.Result{}, firstError(errs)
}

func byName(e native.Existing) (map[string]*flowcontrolv1.PriorityLevelConfiguration, map[string]*flowcontrolv1.FlowSchema) {
	plcs := make(map[string]*flowcontrolv1.PriorityLevelConfiguration, len(e.PriorityLevels))
	for i := range e.PriorityLevels {
		plcs[e.PriorityLevels[i].Name] = &e.PriorityLevels[i]
	}
	fss := make(map[string]*flowcontrolv1.FlowSchema, len(e.FlowSchemas))
	for i := range e.FlowSchemas {
		fss[e.FlowSchemas[i].Name] = &e.FlowSchemas[i]
	}
	return plcs, fss
}

// apply writes one native object with server-side apply. A failure is reported as a Warning
// event on the object it was projected from, and retried with back-off.
func (p *projector) apply(ctx context.Context, obj client.Object, kind string) error {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	delete(u, "status")
	unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
	applied := &unstructured.Unstructured{Object: u}
	err = p.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied),
		client.FieldOwner(native.FieldManager), client.ForceOwnership)
	p.metrics.writes.WithLabelValues(obj.GetObjectKind().GroupVersionKind().Kind, "apply", result(err)).Inc()
	if err != nil {
		p.warn(obj, kind, err)
		return fmt.Errorf("applying %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
	}
	p.pending.expect(applied)
	logf.FromContext(ctx).Info("Applied native object", "kind", obj.GetObjectKind().GroupVersionKind().Kind,
		"name", obj.GetName(), "source", obj.GetAnnotations()[flowv1.AnnotationSource])
	return nil
}

// delete removes an owned native object, only if it is still the version the plan saw.
func (p *projector) delete(ctx context.Context, obj client.Object) error {
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	err := p.client.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv})
	kind := native.KindOf(obj)
	p.metrics.writes.WithLabelValues(kind, "delete", result(err)).Inc()
	if err != nil && !apierrors.IsNotFound(err) {
		if apierrors.IsConflict(err) {
			return nil // changed since the plan: its event triggers a new one
		}
		return fmt.Errorf("deleting %s %s: %w", kind, obj.GetName(), err)
	}
	logf.FromContext(ctx).Info("Deleted native object whose source is gone", "kind", kind, "name", obj.GetName(),
		"source", obj.GetAnnotations()[flowv1.AnnotationSource])
	return nil
}

// warn records a failed write on the source object, which is how `kubectl describe` shows it.
func (p *projector) warn(obj client.Object, kind string, err error) {
	name := obj.GetAnnotations()[flowv1.AnnotationSource][len(kind)+1:]
	var source client.Object = &flowv1.FlowSchema{}
	if kind == native.KindRequestPriority {
		source = &flowv1.RequestPriority{}
	}
	source.SetName(name)
	source.GetObjectKind().SetGroupVersionKind(flowv1.GroupVersion.WithKind(kind))
	p.recorder.Eventf(source, nil, corev1.EventTypeWarning, "ProjectionFailed", "Project",
		"kube-apiserver refused the native %s %s: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "success"
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
