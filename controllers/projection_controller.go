package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/controllers/internal/nativewrite"
	"github.com/apf-operator/apf-operator/controllers/internal/reconcileutil"
	"github.com/apf-operator/apf-operator/internal/native"
)

// The projection (enforcement native) reads kube-apiserver's native flowcontrol objects and
// writes only its own: created when missing (failing on one that appeared meanwhile), then
// server-side applied at the resourceVersion read (patch).
// +kubebuilder:rbac:groups=flowcontrol.apiserver.k8s.io,resources=prioritylevelconfigurations;flowschemas,verbs=get;list;watch;create;patch;delete

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
	snapshots *snapshotHolder
	metrics   *projectionMetrics
	pending   *reconcileutil.Expectations
	inFlight  *inFlight
}

// setup re-plans on every snapshot: the holder watches both of our kinds and both native kinds
// (any change: a user's edit of an owned native object is reverted, a deleted one re-created).
func (p *projector) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("apf-projection").
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		WatchesRawSource(p.snapshots.source(func(_, _ *snapshot) []string { return []string{projectionKey.Name} })).
		Complete(p)
}

// Reconcile applies the plan: levels, then the donors they carve from (projection_donors.go),
// before the schemas that refer to them, stale schemas before stale levels, so no native schema ever refers to a missing level of ours. Objects of
// one kind are written concurrently (projectionWriters at a time).
func (p *projector) Reconcile(ctx context.Context, _ reconcile.Request) (ctrl.Result, error) {
	snap := p.snapshots.get()
	if snap == nil || snap.plan == nil {
		return ctrl.Result{}, nil // the first snapshot enqueues the key
	}
	for i := range snap.natives.PriorityLevels {
		p.pending.Observe(&snap.natives.PriorityLevels[i])
	}
	for i := range snap.natives.FlowSchemas {
		p.pending.Observe(&snap.natives.FlowSchemas[i])
	}
	if wait := p.pending.Wait(); wait > 0 {
		// The snapshot predates some of our writes: the one showing them enqueues the key.
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	plan := snap.plan
	p.metrics.record(plan)
	errs := p.each(len(plan.PriorityLevels), func(i int) error {
		desired := &plan.PriorityLevels[i]
		if levelUpToDate(desired, snap.livePLCs[desired.Name]) {
			return nil
		}
		return p.apply(ctx, desired.DeepCopy(), resourceVersionOf(snap.livePLCs[desired.Name]), native.KindRequestPriority)
	})
	errs = append(errs, p.each(len(plan.Donors), func(i int) error {
		return patchDonor(ctx, p.client, snap.livePLCs[plan.Donors[i].Name], &plan.Donors[i])
	})...)
	errs = append(errs, p.each(len(plan.FlowSchemas), func(i int) error {
		desired := &plan.FlowSchemas[i]
		switch {
		case schemaUpToDate(desired, snap.liveFSs[desired.Name]):
			p.inFlight.forget(desired.Name)
			return nil
		case p.inFlight.pending(desired, snap.listedAt):
			return nil
		}
		start, obj := time.Now(), desired.DeepCopy()
		if err := p.apply(ctx, obj, resourceVersionOf(snap.liveFSs[desired.Name]), native.KindFlowSchema); err != nil {
			return err
		}
		p.inFlight.record(obj, start)
		return nil
	})...)
	errs = append(errs, p.each(len(plan.StaleFlowSchemas), func(i int) error {
		p.inFlight.forget(plan.StaleFlowSchemas[i])
		return p.delete(ctx, snap.liveFSs[plan.StaleFlowSchemas[i]].DeepCopy())
	})...)
	errs = append(errs, p.each(len(plan.StalePriorityLevels), func(i int) error {
		return p.delete(ctx, snap.livePLCs[plan.StalePriorityLevels[i]].DeepCopy())
	})...)
	return ctrl.Result{}, firstError(errs)
}

// projectionWriters bounds the projector's concurrent writes.
const projectionWriters = 8

// each runs write(0..n-1), projectionWriters at a time, and returns every error.
func (p *projector) each(n int, write func(i int) error) []error {
	errs := make([]error, n)
	var g errgroup.Group
	g.SetLimit(projectionWriters)
	for i := 0; i < n; i++ {
		g.Go(func() error {
			errs[i] = write(i)
			return nil
		})
	}
	_ = g.Wait()
	return errs
}

// apply writes one native object: created when the snapshot has none (liveRV ""), else
// applied at the snapshot's resourceVersion (nativewrite). A failure is reported as a Warning
// event on the object it was projected from, and retried with back-off; a failed
// precondition waits for the next snapshot.
func (p *projector) apply(ctx context.Context, obj client.Object, liveRV, kind string) error {
	nativeKind, verb := obj.GetObjectKind().GroupVersionKind().Kind, "apply"
	var wrote bool
	var err error
	if liveRV == "" {
		verb = "create"
		wrote, err = nativewrite.Create(ctx, p.client, obj)
	} else {
		wrote, err = nativewrite.Apply(ctx, p.client, obj, liveRV)
	}
	p.metrics.writes.WithLabelValues(nativeKind, verb, result(err)).Inc()
	if err != nil {
		p.warn(obj, kind, err)
		return fmt.Errorf("writing (%s) %s %s: %w", verb, nativeKind, obj.GetName(), err)
	}
	if !wrote {
		logf.FromContext(ctx).Info("Native object changed since the snapshot: not written", "kind", nativeKind,
			"name", obj.GetName(), "write", verb)
		return nil
	}
	p.pending.Expect(obj)
	p.snapshots.projected.record(time.Now())
	logf.FromContext(ctx).Info("Wrote native object", "kind", nativeKind, "name", obj.GetName(), "write", verb,
		"source", obj.GetAnnotations()[flowv1.AnnotationSource])
	return nil
}

// resourceVersionOf is the resourceVersion of a live object of the snapshot, "" when absent.
func resourceVersionOf[T any, P interface {
	*T
	client.Object
}](live P) string {
	if live == nil {
		return ""
	}
	return live.GetResourceVersion()
}

// delete removes an owned native object, only if it is still the version the plan saw
// (nativewrite.Delete).
func (p *projector) delete(ctx context.Context, obj client.Object) error {
	deleted, err := nativewrite.Delete(ctx, p.client, obj)
	kind := native.KindOf(obj)
	p.metrics.writes.WithLabelValues(kind, "delete", result(err)).Inc()
	if err != nil {
		return fmt.Errorf("deleting %s %s: %w", kind, obj.GetName(), err)
	}
	if deleted {
		logf.FromContext(ctx).Info("Deleted native object whose source is gone", "kind", kind, "name", obj.GetName(),
			"source", obj.GetAnnotations()[flowv1.AnnotationSource])
	}
	return nil
}

// warn records a failed write on the source object, which is how `kubectl describe` shows it.
func (p *projector) warn(obj client.Object, kind string, err error) {
	name, ok := strings.CutPrefix(obj.GetAnnotations()[flowv1.AnnotationSource], kind+"/")
	if !ok {
		return // the operator's own route: no source object; the error is returned and logged
	}
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
