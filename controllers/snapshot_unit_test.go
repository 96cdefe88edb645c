package controllers

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// versioned sets the uid and generation the API server would have given obj.
func versioned[T metav1.Object](obj T, uid string, generation int64) T {
	obj.SetUID(types.UID(uid))
	obj.SetGeneration(generation)
	return obj
}

// TestSnapshotViewsChangeOnlyWhereStatusDoes checks which objects a new snapshot enqueues:
// those whose status inputs changed, and no other.
func TestSnapshotViewsChangeOnlyWhereStatusDoes(t *testing.T) {
	rps := []flowv1.RequestPriority{*versioned(userRP("a", 10), "rp-a", 1), *versioned(userRP("b", 20), "rp-b", 1)}
	fss := []flowv1.FlowSchema{*versioned(userFS("x", "a"), "fs-x", 1), *versioned(userFS("y", "b"), "fs-y", 1)}
	now := time.Now()
	first := buildSnapshot(rps, fss, nil, nil, now)
	if got := sorted(changedNames(nil, first.rps)); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("first snapshot enqueues RequestPriorities %v, want all", got)
	}

	// The same objects again: nothing to write.
	same := buildSnapshot(rps, fss, nil, first, now)
	if got := append(changedNames(first.rps, same.rps), changedNames(first.fss, same.fss)...); len(got) != 0 {
		t.Errorf("an unchanged configuration enqueues %v", got)
	}

	// A new FlowSchema naming b: b's count changes, and the new one is enqueued; a and x are not.
	more := append(slices.Clone(fss), *versioned(userFS("z", "b"), "fs-z", 1))
	next := buildSnapshot(rps, more, nil, same, now)
	if got := sorted(changedNames(same.rps, next.rps)); !slices.Equal(got, []string{"b"}) {
		t.Errorf("a FlowSchema naming b enqueues RequestPriorities %v, want [b]", got)
	}
	if got := sorted(changedNames(same.fss, next.fss)); !slices.Equal(got, []string{"z"}) {
		t.Errorf("a new FlowSchema enqueues FlowSchemas %v, want [z]", got)
	}

	// A new generation with the same effective status is enqueued: observedGeneration moves.
	bumped := slices.Clone(fss)
	bumped[0].Generation = 2
	gen := buildSnapshot(rps, bumped, nil, same, now)
	if got := changedNames(same.fss, gen.fss); !slices.Equal(got, []string{"x"}) {
		t.Errorf("a new generation of x enqueues %v, want [x]", got)
	}
}

// TestSnapshotCurrentView checks that a status is computed only from a view of the object's
// own version.
func TestSnapshotCurrentView(t *testing.T) {
	rp := versioned(userRP("a", 10), "rp-a", 3)
	snap := buildSnapshot([]flowv1.RequestPriority{*rp}, nil, nil, nil, time.Now())
	if _, ok := snap.currentView(snap.rpViews(), rp); !ok {
		t.Error("the view of the object's own version is not current")
	}
	newer := versioned(userRP("a", 10), "rp-a", 4)
	if _, ok := snap.currentView(snap.rpViews(), newer); ok {
		t.Error("a view of generation 3 is current for generation 4")
	}
	recreated := versioned(userRP("a", 10), "rp-other", 3)
	if _, ok := snap.currentView(snap.rpViews(), recreated); ok {
		t.Error("a view of a deleted object is current for the object re-created with its name")
	}
	var none *snapshot
	if _, ok := none.currentView(none.rpViews(), rp); ok {
		t.Error("no snapshot yet, but a current view")
	}
}

// TestSnapshotPendingProjectionWaits checks the grace a Pending projection gets before a status
// shows it: it runs from when the version first was pending, across snapshots.
func TestSnapshotPendingProjectionWaits(t *testing.T) {
	rps := []flowv1.RequestPriority{*versioned(userRP("a", 10), "rp-a", 1)}
	start := time.Now().Add(-10 * time.Second)
	first := buildSnapshot(rps, nil, &native.Existing{}, nil, start)
	v := first.rps["a"]
	if v.projection.Reason != flowv1.ReasonPending {
		t.Fatalf("projection with no native objects: %+v, want Pending", v.projection)
	}
	if wait := v.projectionWait(time.Now(), false); wait <= 0 || wait > projectionPendingGrace-10*time.Second {
		t.Errorf("pending for 10 s: waits %s more, want %s less 10 s", wait, projectionPendingGrace)
	}
	later := buildSnapshot(rps, nil, &native.Existing{}, first, time.Now())
	if !later.rps["a"].pendingSince.Equal(start) {
		t.Errorf("a later snapshot restarts the grace: pending since %s, want %s", later.rps["a"].pendingSince, start)
	}
	expired := buildSnapshot(rps, nil, &native.Existing{}, nil, time.Now().Add(-projectionPendingGrace))
	if wait := expired.rps["a"].projectionWait(time.Now(), false); wait != 0 {
		t.Errorf("pending for the whole grace: waits %s more", wait)
	}
	// While the projector makes progress, the status waits longer, re-checked regularly.
	if wait := expired.rps["a"].projectionWait(time.Now(), true); wait <= 0 || wait > projectorProgressWindow {
		t.Errorf("pending for the grace, the projector progressing: waits %s more, want (0, %s]", wait, projectorProgressWindow)
	}
	if wait := expired.rps["a"].projectionWait(time.Now().Add(firstStatusDeferral), true); wait != 0 {
		t.Errorf("pending for firstStatusDeferral, the projector progressing: waits %s more, want 0", wait)
	}
	live := buildSnapshot(rps, nil, &native.Existing{PriorityLevels: first.plan.PriorityLevels}, first, time.Now())
	if v := live.rps["a"]; v.projection.Reason != flowv1.ReasonProjected || v.projectionWait(time.Now(), false) != 0 {
		t.Errorf("native level written: %+v, waits %s", v.projection, v.projectionWait(time.Now(), false))
	}
}
