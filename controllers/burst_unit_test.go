package controllers

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// TestToEnqueueAfterBurst: between snapshots of one kind (both settled, or both mid-burst)
// only changed views are enqueued; the first settled snapshot after a mid-burst one enqueues
// every object, for the writes deferred during the burst.
func TestToEnqueueAfterBurst(t *testing.T) {
	rps := []flowv1.RequestPriority{*versioned(userRP("a", 10), "rp-a", 1), *versioned(userRP("b", 20), "rp-b", 1)}
	now := time.Now()
	first := buildSnapshot(rps, nil, nil, nil, now)
	same := buildSnapshot(rps, nil, nil, first, now)
	for _, c := range []struct {
		name          string
		oldMid, cuMid bool
		want          []string
	}{
		{"settled after settled", false, false, nil},
		{"mid-burst after settled", false, true, nil},
		{"mid-burst after mid-burst", true, true, nil},
		{"settled after mid-burst: all", true, false, []string{"a", "b"}},
	} {
		first.midBurst, same.midBurst = c.oldMid, c.cuMid
		if got := sorted(toEnqueue(first, same, first.rpViews(), same.rps)); !slices.Equal(got, c.want) {
			t.Errorf("%s: enqueues %v, want %v", c.name, got, c.want)
		}
	}
	if got := sorted(toEnqueue(nil, same, nil, same.rps)); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("first snapshot enqueues %v, want all", got)
	}
}

// TestDeferredMidBurst: only a mid-burst snapshot defers, and only a new object's first status
// (for a bounded time after its creation) or a change of derived figures alone.
func TestDeferredMidBurst(t *testing.T) {
	young := userRP("young", 10)
	young.CreationTimestamp = metav1.NewTime(time.Now().Add(-time.Minute))
	old := userRP("old", 10)
	old.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * firstStatusDeferral))
	for _, c := range []struct {
		name                    string
		mid, hasStatus, figures bool
		obj                     metav1.Object
		want                    bool
		wantRequeue             bool
	}{
		{"settled: first status written", false, false, false, young, false, false},
		{"settled: figures written", false, true, true, young, false, false},
		{"mid-burst: first status waits", true, false, false, young, true, true},
		{"mid-burst: first status of an old object written", true, false, false, old, false, false},
		{"mid-burst: figures alone wait", true, true, true, old, true, false},
		{"mid-burst: a condition change is written", true, true, false, young, false, false},
	} {
		s := &snapshot{midBurst: c.mid}
		deferred, requeue := s.deferredMidBurst(c.obj, c.hasStatus, c.figures)
		if deferred != c.want || (requeue > 0) != c.wantRequeue || requeue > firstStatusDeferral {
			t.Errorf("%s: deferred %t, requeue %s; want %t, requeue %t", c.name, deferred, requeue, c.want, c.wantRequeue)
		}
	}
}

// TestOnlyFiguresDiffer tells a change of the count or fraction alone from any other change.
func TestOnlyFiguresDiffer(t *testing.T) {
	rp := userRP("a", 10)
	rp.Generation = 1
	stored := requestPriorityStatus(rp, accepted(), t0)
	figures := stored.DeepCopy()
	figures.FlowSchemas, figures.AssuredConcurrencyFraction = stored.FlowSchemas+3, "0.5000"
	condition := requestPriorityStatus(rp, duplicate(), t0)
	condition.FlowSchemas = stored.FlowSchemas + 3
	switch {
	case !onlyFiguresDiffer(&stored, *figures):
		t.Error("a new count and fraction: not seen as figures only")
	case onlyFiguresDiffer(&stored, condition):
		t.Error("a Ready change with a new count: seen as figures only")
	case onlyFiguresDiffer(&flowv1.RequestPriorityStatus{}, *figures):
		t.Error("a first status: seen as figures only")
	}
}
