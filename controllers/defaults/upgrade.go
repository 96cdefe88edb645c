package defaults

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

const whyReplaced = "its nativeLevel (immutable) differs from the default's: it was created before the defaults were bound"

// markUpgraded ends the one-time upgrade from a system-top-only install: it sets
// defaults.AnnotationDefaultSet on system-top, provided it is still the operator's and
// unchanged since the plan (the owned preconditions of a repair).
func (r *reconciler) markUpgraded(ctx context.Context, top *flowv1.RequestPriority) error {
	ops := append(ownedPreconditions(top.Generation), jsonPatchOp{Op: "add",
		Path: "/metadata/annotations/" + pointerEscaper.Replace(defaults.AnnotationDefaultSet), Value: defaults.DefaultSetBound})
	patch, err := jsonPatch(ops)
	if err != nil {
		return err
	}
	switch err := r.client.Patch(ctx, top, patch); {
	case err == nil:
		r.pending.Expect(top)
		logf.FromContext(ctx).Info("Upgraded the defaults: created the missing ones once", "RequestPriority", klog.KObj(top))
		r.recorder.Eventf(top, nil, corev1.EventTypeNormal, "Upgraded", "UpgradeDefaults",
			"Created the proposal's defaults that were missing, once, as the upgrade from the system-top-only native defaults; "+
				"from now on a default you delete returns only while no RequestPriority has level 0")
		return nil
	case preconditionFailed(err), apierrors.IsNotFound(err):
		return nil // changed or deleted meanwhile: the next pass decides again
	default:
		return err
	}
}

// replaceAll replaces each owned default RequestPriority whose immutable nativeLevel differs
// from the default's, and stops at the first failure.
func (r *reconciler) replaceAll(ctx context.Context, olds []flowv1.RequestPriority) error {
	for i := range olds {
		if err := r.replace(ctx, &olds[i]); err != nil {
			return err
		}
	}
	return nil
}

// replace deletes old only if it is still the version the plan saw (uid and resourceVersion
// preconditions: a user who meanwhile set the annotation to "false" keeps it), then creates
// the default at once: the creation rules would not bring it back while a level-0
// RequestPriority exists.
func (r *reconciler) replace(ctx context.Context, old *flowv1.RequestPriority) error {
	fresh, ok := defaults.Replacement(old)
	if !ok {
		return fmt.Errorf("no default RequestPriority %s to replace it with", old.Name)
	}
	log := logf.FromContext(ctx).WithValues(kindRequestPriority, klog.KObj(old))
	uid, rv := old.GetUID(), old.GetResourceVersion()
	err := r.client.Delete(ctx, old, client.Preconditions{UID: &uid, ResourceVersion: &rv})
	switch {
	case apierrors.IsConflict(err):
		r.metrics.conflicts.WithLabelValues(kindRequestPriority).Inc()
		log.Info("Default object changed while being replaced; deciding again", "cause", err.Error())
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return err
	}
	r.pending.Expect(old)
	log.Info("Replacing a default RequestPriority", "reason", whyReplaced)
	return r.create(ctx, &fresh, kindRequestPriority, whyReplaced)
}
