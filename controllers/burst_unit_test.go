package controllers

import (
	"slices"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// TestDeferred: a mid-burst snapshot defers a new object's first status (for a bounded time
// after its creation) and a change of derived figures alone; any snapshot, until the users'
// objects are quiet, defers a new FlowSchema's first RequestPriorityNotFound (bounded the same
// way); nothing else waits.
func TestDeferred(t *testing.T) {
	now := time.Now()
	young := userRP("young", 10)
	young.CreationTimestamp = metav1.NewTime(now.Add(-time.Minute))
	old := userRP("old", 10)
	old.CreationTimestamp = metav1.NewTime(now.Add(-2 * firstStatusDeferral))
	first, figures := statusWrite{first: true}, statusWrite{figuresOnly: true}
	dangling := statusWrite{first: true, danglingReference: true}
	const busy = 7 * time.Second // quiet left
	for _, c := range []struct {
		name        string
		mid         bool
		write       statusWrite
		quietLeft   time.Duration
		obj         metav1.Object
		want        bool
		wantRequeue time.Duration // -1: any positive delay
	}{
		{"settled, quiet: first status written", false, first, 0, young, false, 0},
		{"settled, quiet: figures written", false, figures, 0, young, false, 0},
		{"settled, quiet: missing reference written", false, dangling, 0, young, false, 0},
		{"settled, busy: first Ready status written", false, first, busy, young, false, 0},
		{"settled, busy: missing reference waits for quiet", false, dangling, busy, young, true, busy},
		{"settled, busy: missing reference of an old object written", false, dangling, busy, old, false, 0},
		{"settled, busy: figures written", false, figures, busy, old, false, 0},
		{"settled, busy: a condition change is written", false, statusWrite{danglingReference: true}, busy, young, false, 0},
		{"mid-burst: first status waits", true, first, 0, young, true, -1},
		{"mid-burst: first status of an old object written", true, first, 0, old, false, 0},
		{"mid-burst: figures alone wait", true, figures, 0, old, true, 0},
		{"mid-burst: a condition change is written", true, statusWrite{}, busy, young, false, 0},
	} {
		s := &snapshot{midBurst: c.mid}
		deferred, requeue := s.deferred(c.obj, c.write, c.quietLeft, now)
		requeueOK := requeue == c.wantRequeue || c.wantRequeue < 0 && requeue > 0 && requeue <= firstStatusDeferral
		if deferred != c.want || !requeueOK {
			t.Errorf("%s: deferred %t, requeue %s; want %t, requeue %s", c.name, deferred, requeue, c.want, c.wantRequeue)
		}
	}
}

// TestChangeClock: the quiet period counts from the last change, and a busy period that never
// pauses for it stops deferring after firstStatusDeferral.
func TestChangeClock(t *testing.T) {
	var c changeClock
	t0 := time.Now()
	if left := c.quietLeft(t0); left != 0 {
		t.Errorf("no change yet: %s left, want 0", left)
	}
	c.record(t0)
	c.record(t0.Add(3 * time.Second))
	if left := c.quietLeft(t0.Add(5 * time.Second)); left != userQuiet-2*time.Second {
		t.Errorf("2s after the last change: %s left, want %s", left, userQuiet-2*time.Second)
	}
	if left := c.quietLeft(t0.Add(3*time.Second + userQuiet)); left != 0 {
		t.Errorf("quiet for userQuiet: %s left, want 0", left)
	}
	c.record(t0.Add(time.Second)) // a late report of an older change does not move the clock back
	if left := c.quietLeft(t0.Add(4 * time.Second)); left != userQuiet-time.Second {
		t.Errorf("after a late report: %s left, want %s", left, userQuiet-time.Second)
	}
	// Changes every 5 s for firstStatusDeferral: never quiet, but no longer deferring.
	at := t0.Add(3 * time.Second)
	for ; at.Sub(t0) <= firstStatusDeferral; at = at.Add(5 * time.Second) {
		c.record(at)
		if left := c.quietLeft(at.Add(time.Second)); left == 0 && at.Add(time.Second).Sub(t0) < firstStatusDeferral {
			t.Fatalf("%s into endless churn: no quiet left, want deferral until firstStatusDeferral", at.Sub(t0))
		}
	}
	if left := c.quietLeft(at); left != 0 {
		t.Errorf("after %s of churn: %s left, want 0 (bounded)", at.Sub(t0), left)
	}
	if !c.changedWithin(at, 6*time.Second) || c.changedWithin(at.Add(userQuiet), userQuiet) {
		t.Error("changedWithin: wrong about the last change")
	}
	if _, changed := c.quietAfter(at); changed {
		t.Error("quietAfter: a change reported after the last one")
	}
	if quietAt, changed := c.quietAfter(t0); !changed || !quietAt.Equal(at.Add(-5*time.Second+snapshotQuiet)) {
		t.Errorf("quietAfter: %s, %t; want the last change + snapshotQuiet, true", quietAt.Sub(t0), changed)
	}
	// A quiet period starts a new busy period.
	later := at.Add(time.Minute)
	c.record(later)
	if left := c.quietLeft(later); left != userQuiet {
		t.Errorf("first change after a quiet period: %s left, want %s", left, userQuiet)
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

// TestProgressClock: the projector counts as progressing for projectorProgressWindow after a
// native write.
func TestProgressClock(t *testing.T) {
	var p progressClock
	now := time.Now()
	if p.progressing(now) {
		t.Error("no write yet, but progressing")
	}
	p.record(now)
	if !p.progressing(now.Add(projectorProgressWindow - time.Second)) {
		t.Error("a write within the window, but not progressing")
	}
	if p.progressing(now.Add(projectorProgressWindow)) {
		t.Error("no write for the window, but progressing")
	}
}

// TestSameForSnapshot: status writes of native objects (kube-apiserver's) and of ours do not
// signal a change; spec, label and annotation changes of native objects do.
func TestSameForSnapshot(t *testing.T) {
	native := func(rv string, generation int64, labels map[string]string) *flowcontrolv1.FlowSchema {
		fs := &flowcontrolv1.FlowSchema{}
		fs.ResourceVersion, fs.Generation, fs.Labels = rv, generation, labels
		return fs
	}
	ours := func(rv string, generation int64, labels map[string]string) *flowv1.FlowSchema {
		fs := userFS("x", "a")
		fs.ResourceVersion, fs.Generation, fs.Labels = rv, generation, labels
		return fs
	}
	owned := map[string]string{"app.kubernetes.io/managed-by": "apf-operator"}
	for _, c := range []struct {
		name     string
		old, cur metav1.Object
		specOnly bool
		want     bool
	}{
		{"native resync", native("1", 1, owned), native("1", 1, owned), false, true},
		{"native status write", native("1", 1, owned), native("2", 1, owned), false, true},
		{"native spec change", native("1", 1, owned), native("2", 2, owned), false, false},
		{"native label change", native("1", 1, owned), native("2", 1, nil), false, false},
		{"our status write", ours("1", 1, nil), ours("2", 1, nil), true, true},
		{"our label change", ours("1", 1, nil), ours("2", 1, owned), true, true},
		{"our spec change", ours("1", 1, nil), ours("2", 2, nil), true, false},
	} {
		if got := sameForSnapshot(c.old.(client.Object), c.cur.(client.Object), c.specOnly); got != c.want {
			t.Errorf("%s: same %t, want %t", c.name, got, c.want)
		}
	}
}
