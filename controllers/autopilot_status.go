package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/autopilot"
)

// Reasons of the autopilot's Events on a RequestPriority.
const (
	ReasonAutopilotApplied    = "AutopilotApplied"
	ReasonAutopilotRolledBack = "AutopilotRolledBack"
	ReasonAutopilotFrozen     = "AutopilotFrozen"
)

// record writes the step into every member's status.autopilot and announces the changes of
// applied shares, rollbacks and freezes as Events. before is the loop's memory before the
// step. left says, by level, why a member was left out of the pool in this window.
func (r *autopilotRunner) record(ctx context.Context, members []*flowv1.RequestPriority, levels []autopilot.Level,
	step autopilot.Step, before autopilot.Memory, left map[string]string) error {
	now := r.clock.Now()
	mem := r.loop.Memory()
	frozeNow := !step.FrozenUntil.IsZero() && !before.FrozenUntil.After(now)
	for i, rp := range members {
		desired := r.memberStatus(rp, levels[i], step, mem, now)
		if why, out := left[levels[i].Name]; out {
			desired.State, desired.Message = flowv1.AutopilotWaiting, why
		}
		from := previousApplied(rp)
		if from != *desired.AppliedShares {
			desired.LastChangeTime = ptr.To(metav1.NewTime(now)) // a revert to Git is a change the loop's memory misses
		}
		if err := r.patchAutopilot(ctx, rp, desired); err != nil {
			return err
		}
		r.announce(rp, from, *desired.AppliedShares, step, frozeNow)
	}
	return nil
}

// memberStatus is one member's status.autopilot after a step.
func (r *autopilotRunner) memberStatus(rp *flowv1.RequestPriority, level autopilot.Level, step autopilot.Step,
	mem autopilot.Memory, now time.Time) *flowv1.AutopilotStatus {
	applied, ok := step.Applied[level.Name]
	if !ok {
		applied = level.Shares
	}
	out := &flowv1.AutopilotStatus{State: step.State, ConfiguredShares: level.ConfiguredShares,
		AppliedShares: ptr.To(applied), Pool: r.pool, Message: step.Message}
	if rp.Status.Autopilot != nil && rp.Status.Autopilot.Pool == r.pool {
		out.RecommendedShares = rp.Status.Autopilot.RecommendedShares // the last complete window's
	}
	if rec, ok := step.Recommended[level.Name]; ok {
		out.RecommendedShares = ptr.To(rec.Shares)
		if rec.Why != "" {
			out.Message = joinWhy(step.Message, rec.Why)
		}
	}
	if v, ok := mem.LastGood[level.Name]; ok {
		out.LastGoodShares = ptr.To(v)
	}
	if !mem.LastChange.IsZero() {
		out.LastChangeTime = ptr.To(metav1.NewTime(mem.LastChange))
	}
	frozenUntil := step.FrozenUntil
	if frozenUntil.IsZero() && mem.FrozenUntil.After(now) {
		frozenUntil = mem.FrozenUntil
	}
	if !frozenUntil.IsZero() {
		out.FrozenUntil = ptr.To(metav1.NewTime(frozenUntil))
	}
	return out
}

func joinWhy(msg, why string) string {
	if msg == "" {
		return why
	}
	return msg + "; " + why
}

// previousApplied is the shares the member's native level held before the step as its status
// records them (its configured shares without a record).
func previousApplied(rp *flowv1.RequestPriority) int32 {
	if st := rp.Status.Autopilot; st != nil && st.AppliedShares != nil {
		return *st.AppliedShares
	}
	return ptr.Deref(rp.Spec.AssuredConcurrencyShares, 0)
}

// announce records the Events of one member's step: a change of its applied shares (a step or
// a rollback) and the start of a freeze.
func (r *autopilotRunner) announce(rp *flowv1.RequestPriority, from, to int32, step autopilot.Step, frozeNow bool) {
	if from != to {
		reason, action, why := ReasonAutopilotApplied, "ApplyShares", step.Message
		switch {
		case step.RolledBack:
			reason, action = ReasonAutopilotRolledBack, "RollBackShares"
		case !step.Changed: // not the loop's step: the applied shares no longer count
			why = "the configured shares apply again: the recorded applied shares no longer count (the pool's members, " +
				"their configured shares or their bounds changed in Git)"
		}
		r.recorder.Eventf(rp, nil, corev1.EventTypeNormal, reason, action,
			"nominal shares %d -> %d (configured %d): %s", from, to, ptr.Deref(rp.Spec.AssuredConcurrencyShares, 0), why)
	}
	if frozeNow {
		r.recorder.Eventf(rp, nil, corev1.EventTypeWarning, ReasonAutopilotFrozen, "Freeze",
			"autopilot frozen until %s: %s", step.FrozenUntil.UTC().Format(time.RFC3339), step.Message)
	}
}

// patchAutopilot writes status.autopilot of rp (nil removes it) with a merge patch guarded by
// the resource version; on a conflict it reads the object again and retries.
func (r *autopilotRunner) patchAutopilot(ctx context.Context, rp *flowv1.RequestPriority, desired *flowv1.AutopilotStatus) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if equality.Semantic.DeepEqual(rp.Status.Autopilot, desired) {
			return nil
		}
		orig := rp.DeepCopy()
		rp.Status.Autopilot = desired.DeepCopy()
		err := r.client.Status().Patch(ctx, rp, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err):
			if getErr := r.reader.Get(ctx, client.ObjectKeyFromObject(rp), rp); getErr != nil {
				return getErr
			}
			return err
		case err != nil:
			return fmt.Errorf("writing the autopilot status of RequestPriority %s: %w", rp.Name, err)
		}
		return nil
	})
}

// clearOutsidePool removes status.autopilot from the RequestPriorities without spec.autopilot.
func (r *autopilotRunner) clearOutsidePool(ctx context.Context, rps []flowv1.RequestPriority) error {
	for i := range rps {
		if rps[i].Status.Autopilot != nil && !inPool(&rps[i]) {
			if err := r.patchAutopilot(ctx, &rps[i], nil); err != nil {
				return err
			}
		}
	}
	return nil
}
