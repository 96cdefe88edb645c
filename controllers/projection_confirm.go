package controllers

import (
	"context"
	"strings"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// A status whose projection a snapshot saw pending (the native object not yet written) is
// confirmed from the cache as soon as the projector's write reaches it: the status reconcilers
// watch the native objects and check the one of their object against the snapshot's plan
// (an O(1) cache read). Waiting for the next snapshot instead would tie every status of a bulk
// apply to the snapshot cadence, which the projector's own writes slow to one per
// snapshotMaxDelay (docs/scale.md).

// nativeChanges are the changes of native objects that can confirm a projection: a creation,
// a new generation (spec) or new labels or annotations (ownership); not kube-apiserver's status
// writes.
var nativeChanges = builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
	predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))

// toSource maps an owned native object to the object of kind it is projected from (its
// source annotation, native.Source); nothing for other native objects.
func toSource(kind string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		if !native.Owned(obj) {
			return nil
		}
		k, name, ok := strings.Cut(obj.GetAnnotations()[flowv1.AnnotationSource], "/")
		if !ok || k != kind || name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
	})
}

// confirmFlowSchema returns v with its projection confirmed when the snapshot saw it pending
// and the cache now holds the planned native FlowSchema.
func confirmFlowSchema(ctx context.Context, c client.Reader, snap *snapshot, name string, v objectView) objectView {
	if v.projection.Reason != flowv1.ReasonPending || snap.plan == nil {
		return v
	}
	res := snap.plan.FlowSchemaResults[name]
	desired := snap.planFSs[res.NativeName]
	var live flowcontrolv1.FlowSchema
	if desired == nil || c.Get(ctx, client.ObjectKey{Name: res.NativeName}, &live) != nil || !schemaUpToDate(desired, &live) {
		return v
	}
	return confirmedView(v, res)
}

// confirmRequestPriority is confirmFlowSchema for a RequestPriority's native level.
func confirmRequestPriority(ctx context.Context, c client.Reader, snap *snapshot, name string, v objectView) objectView {
	if v.projection.Reason != flowv1.ReasonPending || snap.plan == nil {
		return v
	}
	res := snap.plan.RequestPriorities[name]
	desired := snap.planPLCs[res.NativeName]
	var live flowcontrolv1.PriorityLevelConfiguration
	if desired == nil || c.Get(ctx, client.ObjectKey{Name: res.NativeName}, &live) != nil || !levelUpToDate(desired, &live) {
		return v
	}
	return confirmedView(v, res)
}

func confirmedView(v objectView, res native.Result) objectView {
	v.projection, v.pendingSince = res, time.Time{}
	return v
}
