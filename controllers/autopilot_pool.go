package controllers

import (
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/autopilot"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// inPool reports whether a RequestPriority belongs to the autopilot's pool: spec.autopilot is
// set and the spec is valid (a spec that slipped past the webhook is Ready=False, not in
// effect, and left out of the pool rather than holding it up). A bound level (spec.nativeLevel)
// is never in it: its shares are its native level's, which the autopilot never moves.
func inPool(rp *flowv1.RequestPriority) bool {
	return rp.Spec.Autopilot != nil && rp.DeletionTimestamp == nil && !validation.Bound(&rp.Spec) &&
		len(validation.RequestPrioritySpec(&rp.Spec, poolSpecPath)) == 0
}

var poolSpecPath = field.NewPath("spec")

// poolShares are the configured (Git) shares of the pool's RequestPriorities, by name; nil
// when none has autopilot.
func poolShares(rps []flowv1.RequestPriority) map[string]int32 {
	var out map[string]int32
	for i := range rps {
		if inPool(&rps[i]) {
			if out == nil {
				out = map[string]int32{}
			}
			out[rps[i].Name] = *rps[i].Spec.AssuredConcurrencyShares
		}
	}
	return out
}

// poolMembers are the pool's RequestPriorities, sorted by name.
func poolMembers(rps []flowv1.RequestPriority) []*flowv1.RequestPriority {
	var out []*flowv1.RequestPriority
	for i := range rps {
		if inPool(&rps[i]) {
			out = append(out, &rps[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// appliedShares are the autopilot's shares in force, by RequestPriority name, which the
// projection applies in place of the configured ones; nil when the configured shares apply.
// They are status.autopilot.appliedShares of every pool member, and count only when, for
// every member at once, the status was computed for the current pool (status.autopilot.pool
// is autopilot.Pool of the members' configured shares: any Git change of the pool voids it),
// the applied shares lie within the member's [minShares, maxShares], and their sum is the
// configured sum. All or nothing: the pool stays zero-sum, so every level outside it keeps
// its nominal seats. While the leader is half-way through writing the members' status (each
// record valid, their sum not yet), prev, the shares applied until then, stays in force if it
// still fits the pool: a step must not pass through Git's values on its way.
func appliedShares(rps []flowv1.RequestPriority, prev map[string]int32) map[string]int32 {
	configured := poolShares(rps)
	if len(configured) == 0 {
		return nil
	}
	pool := autopilot.Pool(configured)
	out := make(map[string]int32, len(configured))
	var appliedSum, configuredSum int64
	for _, rp := range poolMembers(rps) {
		st, bounds := rp.Status.Autopilot, rp.Spec.Autopilot
		if st == nil || st.AppliedShares == nil || st.Pool != pool {
			return nil
		}
		applied := *st.AppliedShares
		if applied < bounds.MinShares || applied > bounds.MaxShares {
			return nil
		}
		out[rp.Name] = applied
		appliedSum += int64(applied)
		configuredSum += int64(configured[rp.Name])
	}
	if appliedSum != configuredSum {
		return stillFits(prev, rps, configuredSum)
	}
	return out
}

// stillFits returns prev when it holds shares for exactly the pool's members, each within the
// member's bounds, summing to the configured sum; else nil.
func stillFits(prev map[string]int32, rps []flowv1.RequestPriority, configuredSum int64) map[string]int32 {
	members := poolMembers(rps)
	if len(prev) != len(members) {
		return nil
	}
	var sum int64
	for _, rp := range members {
		v, ok := prev[rp.Name]
		if !ok || v < rp.Spec.Autopilot.MinShares || v > rp.Spec.Autopilot.MaxShares {
			return nil
		}
		sum += int64(v)
	}
	if sum != configuredSum {
		return nil
	}
	return prev
}

// inForce is the shares a pool member's native level holds: applied (appliedShares) or else
// configured.
func inForce(applied map[string]int32, rp *flowv1.RequestPriority) int32 {
	if v, ok := applied[rp.Name]; ok {
		return v
	}
	return ptr.Deref(rp.Spec.AssuredConcurrencyShares, 0)
}
