package controllers

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/autopilot"
)

// TestAppliedShares: the rule that decides whether the projection applies the autopilot's
// shares or Git's.
func TestAppliedShares(t *testing.T) {
	pool := autopilot.Pool(map[string]int32{"a": 10, "b": 30})
	with := func(rp *flowv1.RequestPriority, applied int32, pool string) flowv1.RequestPriority {
		rp.Status.Autopilot = &flowv1.AutopilotStatus{AppliedShares: ptr.To(applied), Pool: pool}
		return *rp
	}
	static := with(pooledRP("static", 300, 20, 0, 0), 99, pool) // no spec.autopilot: its status is ignored
	cases := []struct {
		name string
		rps  []flowv1.RequestPriority
		want map[string]int32
	}{
		{"applied", []flowv1.RequestPriority{with(pooledRP("a", 1, 10, 5, 40), 17, pool),
			with(pooledRP("b", 2, 30, 5, 40), 23, pool), static}, map[string]int32{"a": 17, "b": 23}},
		{"an invalid member is left out", []flowv1.RequestPriority{with(pooledRP("a", 1, 10, 5, 40), 17, pool),
			with(pooledRP("b", 2, 30, 5, 40), 23, pool), with(pooledRP("invalid", 3, 50, 5, 40), 40, pool)},
			map[string]int32{"a": 17, "b": 23}},
		{"no pool", []flowv1.RequestPriority{static}, nil},
		{"a member without status", []flowv1.RequestPriority{with(pooledRP("a", 1, 10, 5, 40), 17, pool),
			*pooledRP("b", 2, 30, 5, 40)}, nil},
		{"another pool (Git changed)", []flowv1.RequestPriority{with(pooledRP("a", 1, 10, 5, 40), 17, pool),
			with(pooledRP("b", 2, 31, 5, 40), 23, pool)}, nil},
		{"out of bounds", []flowv1.RequestPriority{with(pooledRP("a", 1, 10, 5, 16), 17, pool),
			with(pooledRP("b", 2, 30, 5, 40), 23, pool)}, nil},
		{"half written (sum differs)", []flowv1.RequestPriority{with(pooledRP("a", 1, 10, 5, 40), 17, pool),
			with(pooledRP("b", 2, 30, 5, 40), 30, pool)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := appliedShares(c.rps, nil); !equality.Semantic.DeepEqual(got, c.want) {
				t.Errorf("appliedShares = %v, want %v", got, c.want)
			}
		})
	}
}

// TestAppliedSharesMidWrite: while the leader has written one member's new record and not
// the other's, the shares projected until then stay in force, unless they no longer fit.
func TestAppliedSharesMidWrite(t *testing.T) {
	pool := autopilot.Pool(map[string]int32{"a": 10, "b": 30})
	with := func(rp *flowv1.RequestPriority, applied int32) flowv1.RequestPriority {
		rp.Status.Autopilot = &flowv1.AutopilotStatus{AppliedShares: ptr.To(applied), Pool: pool}
		return *rp
	}
	// Step a 17 -> 20, b 23 -> 20: a is written, b not yet (20 + 23 != 40).
	half := []flowv1.RequestPriority{with(pooledRP("a", 1, 10, 5, 40), 20), with(pooledRP("b", 2, 30, 5, 40), 23)}
	for _, c := range []struct {
		name       string
		prev, want map[string]int32
	}{
		{"the previous shares stay", map[string]int32{"a": 17, "b": 23}, map[string]int32{"a": 17, "b": 23}},
		{"no previous shares: Git's", nil, nil},
		{"previous of another pool (sum differs): Git's", map[string]int32{"a": 18, "b": 23}, nil},
		{"previous of other members: Git's", map[string]int32{"a": 17, "c": 23}, nil},
		{"previous out of today's bounds: Git's", map[string]int32{"a": 4, "b": 36}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := appliedShares(half, c.prev); !equality.Semantic.DeepEqual(got, c.want) {
				t.Errorf("appliedShares = %v, want %v", got, c.want)
			}
		})
	}
}

// TestStatusKeepsAutopilot: the status reconciler rebuilds the status but carries
// status.autopilot (the autopilot's) over unchanged.
func TestStatusKeepsAutopilot(t *testing.T) {
	rp := pooledRP("a", 1, 10, 5, 40)
	rp.Status.Autopilot = &flowv1.AutopilotStatus{State: flowv1.AutopilotApplied, AppliedShares: ptr.To[int32](17), Pool: "p"}
	want := rp.Status.Autopilot.DeepCopy()
	got := requestPriorityStatus(rp, effective.Status{InEffect: true}, rp.CreationTimestamp)
	if !equality.Semantic.DeepEqual(got.Autopilot, want) {
		t.Errorf("status.autopilot became %+v, want %+v", got.Autopilot, want)
	}
}

// TestSameForSnapshotSeesAppliedShares: a write of a RequestPriority's applied shares or pool
// changes the snapshot (the projection applies them); another status write does not.
func TestSameForSnapshotSeesAppliedShares(t *testing.T) {
	old := pooledRP("a", 1, 10, 5, 40)
	old.ResourceVersion = "1"
	state := old.DeepCopy()
	state.ResourceVersion, state.Status.Autopilot = "2", &flowv1.AutopilotStatus{State: flowv1.AutopilotWaiting}
	applied := state.DeepCopy()
	applied.ResourceVersion, applied.Status.Autopilot.AppliedShares = "3", ptr.To[int32](12)
	pool := applied.DeepCopy()
	pool.ResourceVersion, pool.Status.Autopilot.Pool = "4", "p"
	for _, c := range []struct {
		name     string
		old, cur *flowv1.RequestPriority
		same     bool
	}{{"state only", old, state, true}, {"applied shares", state, applied, false}, {"pool", applied, pool, false}} {
		if got := sameForSnapshot(c.old, c.cur, true); got != c.same {
			t.Errorf("%s: sameForSnapshot = %v, want %v", c.name, got, c.same)
		}
	}
}

// TestSnapshotHandlerSeesAppliedShares: the snapshot holder's watch of RequestPriorities
// recomputes the snapshot when the autopilot writes applied shares, without counting it as a
// user's change (which would defer statuses as during a GitOps sync); a write of the state
// alone recomputes nothing.
func TestSnapshotHandlerSeesAppliedShares(t *testing.T) {
	h := &snapshotHolder{changed: make(chan struct{}, 1)}
	handler := h.handler(true)
	old := pooledRP("a", 1, 10, 5, 40)
	old.ResourceVersion = "1"
	state := old.DeepCopy()
	state.ResourceVersion, state.Status.Autopilot = "2", &flowv1.AutopilotStatus{State: flowv1.AutopilotWaiting}
	applied := state.DeepCopy()
	applied.ResourceVersion, applied.Status.Autopilot.AppliedShares = "3", ptr.To[int32](12)
	signalled := func() bool {
		select {
		case <-h.changed:
			return true
		default:
			return false
		}
	}
	handler.OnUpdate(old, state)
	if signalled() {
		t.Error("a write of status.autopilot.state recomputed the snapshot")
	}
	handler.OnUpdate(state, applied)
	if !signalled() {
		t.Error("a write of status.autopilot.appliedShares did not recompute the snapshot")
	}
	if h.changes.changedWithin(time.Now(), time.Hour) {
		t.Error("the autopilot's status write was recorded as a user's change")
	}
}
