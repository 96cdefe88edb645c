package defaults

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

const (
	kindRequestPriority = "RequestPriority"
	kindFlowSchema      = "FlowSchema"

	whyRequestPriorities = "no RequestPriority has priorityLevel 0"
	whyFlowSchemas       = "no FlowSchema refers to a RequestPriority of priorityLevel 0"
)

// apply carries out the plan. Lost races are counted and reported, not returned: the event
// that caused them triggers the next pass.
func (r *reconciler) apply(ctx context.Context, a defaults.Actions) error {
	errs := []error{r.replaceAll(ctx, a.ReplaceRequestPriorities), r.createInOrder(ctx, a)}
	for i := range a.RepairRequestPriorities {
		rp := &a.RepairRequestPriorities[i]
		errs = append(errs, r.repair(ctx, rp, rp.Spec, kindRequestPriority))
	}
	for i := range a.RepairFlowSchemas {
		fs := &a.RepairFlowSchemas[i]
		errs = append(errs, r.repair(ctx, fs, fs.Spec, kindFlowSchema))
	}
	for _, h := range a.HandOvers {
		errs = append(errs, r.handOver(ctx, h))
	}
	return errors.Join(errs...)
}

// createInOrder makes the creations in the plan's order (RequestPriority objects first, so
// that the FlowSchemas find theirs) and stops at the first failure: the plan puts the objects
// that end the need to create last, and creating one of them after a failed creation would
// leave the set incomplete for good.
func (r *reconciler) createInOrder(ctx context.Context, a defaults.Actions) error {
	for i := range a.CreateRequestPriorities {
		if err := r.create(ctx, &a.CreateRequestPriorities[i], kindRequestPriority, whyRequestPriorities); err != nil {
			return err
		}
	}
	for i := range a.CreateFlowSchemas {
		if err := r.create(ctx, &a.CreateFlowSchemas[i], kindFlowSchema, whyFlowSchemas); err != nil {
			return err
		}
	}
	if a.MarkUpgraded != nil {
		return r.markUpgraded(ctx, a.MarkUpgraded)
	}
	return nil
}

func (r *reconciler) create(ctx context.Context, obj client.Object, kind, why string) error {
	log := logf.FromContext(ctx).WithValues(kind, klog.KObj(obj))
	err := r.client.Create(ctx, obj)
	switch {
	case err == nil:
		r.pending.Expect(obj)
		r.metrics.created.WithLabelValues(kind).Inc()
		log.Info("Created default object", "reason", why)
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Created", "CreateDefault",
			"Created the default %s %s because %s", kind, obj.GetName(), why)
		return nil
	case apierrors.IsAlreadyExists(err):
		r.metrics.conflicts.WithLabelValues(kind).Inc()
		log.Info("Default object was created by someone else first; keeping theirs")
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, "CreateConflict", "CreateDefault",
			"Did not create the default %s %s: an object of that name appeared meanwhile; the operator keeps it", kind, obj.GetName())
		return nil
	default:
		return err
	}
}

// repair restores the default spec with a JSON patch whose tests make the API server apply
// it only if the object is still what the plan saw: same generation (spec unchanged), still
// labeled as the operator's, autoupdate still "true". Status writes do not change the
// generation, so they do not make a repair fail; a user's edit in between does.
func (r *reconciler) repair(ctx context.Context, obj client.Object, spec any, kind string) error {
	log := logf.FromContext(ctx).WithValues(kind, klog.KObj(obj))
	patch, err := repairPatch(obj.GetGeneration(), spec)
	if err != nil {
		return err
	}
	err = r.client.Patch(ctx, obj, patch)
	switch {
	case err == nil:
		r.pending.Expect(obj)
		r.metrics.repaired.WithLabelValues(kind).Inc()
		log.Info("Restored the default spec")
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Repaired", "RepairDefault",
			"Restored the default spec of %s %s; set annotation %s to \"false\" to keep your own spec",
			kind, obj.GetName(), flowv1.AnnotationAutoUpdate)
		return nil
	case preconditionFailed(err):
		r.metrics.conflicts.WithLabelValues(kind).Inc()
		log.Info("Default object changed while being repaired; deciding again", "cause", err.Error())
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, "RepairConflict", "RepairDefault",
			"Did not restore the default spec of %s %s: it changed meanwhile; the operator decides again", kind, obj.GetName())
		return nil
	case apierrors.IsNotFound(err):
		return nil // deleted meanwhile: the deletion event triggers the next pass
	default:
		return err
	}
}

// handOver records that the user took a default object over by applying their own spec: it
// sets the autoupdate annotation to "false" (with the same preconditions as a repair), so that
// the operator never restores that spec and the applier's next apply changes nothing.
func (r *reconciler) handOver(ctx context.Context, h defaults.HandOver) error {
	obj, ok := h.Object.(client.Object)
	if !ok {
		return fmt.Errorf("%s %s: not a client.Object", h.Kind, h.Object.GetName())
	}
	log := logf.FromContext(ctx).WithValues(h.Kind, klog.KObj(obj))
	patch, err := handOverPatch(obj.GetGeneration())
	if err != nil {
		return err
	}
	err = r.client.Patch(ctx, obj, patch)
	switch {
	case err == nil:
		r.pending.Expect(obj)
		r.metrics.takenOver.WithLabelValues(h.Kind).Inc()
		log.Info("Default object taken over by an applied manifest; no longer restoring its spec", "appliedBy", h.By)
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, "TakenOver", "HandOverDefault",
			"The spec of %s %s was applied by %s, so the object is now yours: the operator set annotation %s to \"false\" and no longer restores the default spec",
			h.Kind, obj.GetName(), h.By, flowv1.AnnotationAutoUpdate)
		return nil
	case preconditionFailed(err):
		r.metrics.conflicts.WithLabelValues(h.Kind).Inc()
		log.Info("Default object changed while being handed over; deciding again", "cause", err.Error())
		return nil
	case apierrors.IsNotFound(err):
		return nil
	default:
		return err
	}
}

// reportBlocked emits a warning (reason RepairBlocked or ReplaceBlocked) the first time an
// object is blocked or its message changes (for a kept unbound RequestPriority: the FlowSchemas
// that refer to it), and forgets objects that are no longer blocked.
func (r *reconciler) reportBlocked(ctx context.Context, blocked []defaults.Blocked, rps []flowv1.RequestPriority, fss []flowv1.FlowSchema) {
	now := make(map[string]string, len(blocked))
	for _, b := range blocked {
		key := b.Kind + "/" + b.Name
		now[key] = b.Message
		if r.blocked[key] == b.Message {
			continue
		}
		obj := findByName(b.Kind, b.Name, rps, fss)
		if obj == nil {
			continue
		}
		action := "RepairDefault"
		if b.Reason == defaults.ReasonReplaceBlocked {
			action = "ReplaceDefault"
			logf.FromContext(ctx).Info("Keeping an unbound default RequestPriority that FlowSchemas of the user refer to",
				b.Kind, klog.KObj(obj), "why", b.Message)
		}
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, b.Reason, action, "%s", b.Message)
	}
	r.blocked = now
}

// findByName returns the object of the kind and name among the listed ones, or nil.
func findByName(kind, name string, rps []flowv1.RequestPriority, fss []flowv1.FlowSchema) client.Object {
	switch kind {
	case kindRequestPriority:
		for i := range rps {
			if rps[i].Name == name {
				return &rps[i]
			}
		}
	case kindFlowSchema:
		for i := range fss {
			if fss[i].Name == name {
				return &fss[i]
			}
		}
	}
	return nil
}
