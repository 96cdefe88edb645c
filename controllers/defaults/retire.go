package defaults

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

// retire deletes the defaults of the other enforcement mode that the plan retires, FlowSchemas
// first so that none is left referring to a deleted RequestPriority, and stops at the first
// failure (the next pass decides again).
func (r *reconciler) retire(ctx context.Context, a defaults.Actions) error {
	for i := range a.RetireFlowSchemas {
		if err := r.retireOne(ctx, &a.RetireFlowSchemas[i], kindFlowSchema); err != nil {
			return err
		}
	}
	for i := range a.RetireRequestPriorities {
		if err := r.retireOne(ctx, &a.RetireRequestPriorities[i], kindRequestPriority); err != nil {
			return err
		}
	}
	return nil
}

// retireOne deletes obj only if it is still the version the plan saw (uid and
// resourceVersion preconditions): a user who meanwhile set the autoupdate annotation to
// "false" or removed the label keeps the object.
func (r *reconciler) retireOne(ctx context.Context, obj client.Object, kind string) error {
	log := logf.FromContext(ctx).WithValues(kind, klog.KObj(obj))
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	err := r.client.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv})
	switch {
	case err == nil:
		r.pending.Expect(obj)
		log.Info("Retired a default of the other enforcement mode", "set", r.set.Name())
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Retired", "RetireDefault",
			"Deleted %s %s: the operator created it as a default of the other enforcement mode, and the %s "+
				"defaults do not hold it; set annotation %s to \"false\" on such an object to keep it",
			kind, obj.GetName(), r.set.Name(), flowv1.AnnotationAutoUpdate)
		return nil
	case apierrors.IsConflict(err):
		r.metrics.conflicts.WithLabelValues(kind).Inc()
		log.Info("Default object changed while being retired; deciding again", "cause", err.Error())
		return nil
	case apierrors.IsNotFound(err):
		return nil
	default:
		return err
	}
}
