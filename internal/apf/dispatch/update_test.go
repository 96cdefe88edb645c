package dispatch_test

import (
	"testing"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
)

// TestUpdateResizedLevelDrains: after the queue count changes, the requests of the old queues
// are dispatched before those of the new queues, and none is lost.
func TestUpdateResizedLevelDrains(t *testing.T) {
	cfg1 := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 1, limit: 10})
	h := newHarness(t, cfg1, dispatch.Options{ServerConcurrencyLimit: 1})
	run := h.submit(schema(t, cfg1, "l"), 0, 1, "run")
	old1 := h.submit(schema(t, cfg1, "l"), 5, 1, "old1")
	old2 := h.submit(schema(t, cfg1, "l"), 6, 1, "old2")

	cfg2 := buildConfig(t, lvl{name: "l", level: 100, shares: 20, queues: 8, hand: 2, limit: 10})
	h.d.Update(cfg2)
	new1 := h.submit(schema(t, cfg2, "l"), 7, 1, "new1")
	stale := h.submit(schema(t, cfg1, "l"), 8, 1, "stale") // classified against cfg1
	st := levelState(t, h.d.Snapshot(), "l")
	if len(st.DrainingQueues) != 1 || st.DrainingQueues[0].Length != 2 || st.Waiting != 4 || st.ExecutingWidth != 1 {
		t.Fatalf("level state %+v; want the old queue draining with 2 and 4 waiting in all", st)
	}
	h.takeStarted()
	var order []*job
	for current := run; current != nil; {
		current.finish()
		started := h.takeStarted()
		order = append(order, started...)
		current = nil
		if len(started) == 1 {
			current = started[0]
		}
	}
	if len(order) != 4 || order[0] != old1 || order[1] != old2 || !new1.didStart || !stale.didStart {
		t.Fatalf("dispatch order %s; want the old queue first, then the new one", tags(order))
	}
	if st := h.d.Snapshot(); st.ExecutingWidth != 0 || st.Waiting != 0 || len(levelState(t, st, "l").DrainingQueues) != 0 {
		t.Fatalf("after drain: %+v", st)
	}
}

// TestUpdateRemovedLevelDrains: a removed level keeps dispatching its waiting requests; new
// requests of its schemas go to the lowest level; executing requests finish without leaking.
func TestUpdateRemovedLevelDrains(t *testing.T) {
	cfg1 := buildConfig(t, lvl{name: "a", level: 100, shares: 10, queues: 1, limit: 10},
		lvl{name: "b", level: 200, shares: 10, queues: 1, limit: 10})
	h := newHarness(t, cfg1, dispatch.Options{ServerConcurrencyLimit: 2})
	b1 := h.submit(schema(t, cfg1, "b"), 0, 1, "b-run")
	a1 := h.submit(schema(t, cfg1, "a"), 0, 1, "a-run")
	bWait := h.submit(schema(t, cfg1, "b"), 0, 1, "b-wait")

	cfg2 := buildConfig(t, lvl{name: "a", level: 100, shares: 10, queues: 1, limit: 10},
		lvl{name: "c", level: 300, shares: 10, queues: 1, limit: 10})
	h.d.Update(cfg2)
	stale := h.submit(schema(t, cfg1, "b"), 0, 1, "stale-b") // b is gone: lowest level, c
	st := h.d.Snapshot()
	if b := levelState(t, st, "b"); !b.Draining || b.Waiting != 1 || b.ExecutingWidth != 1 {
		t.Fatalf("removed level %+v; want draining with 1 waiting and 1 executing", b)
	}
	if c := levelState(t, st, "c"); c.Waiting != 1 {
		t.Fatalf("level c %+v; want the stale request waiting there", c)
	}
	h.takeStarted()
	b1.finish()
	a1.finish()
	got := h.takeStarted()
	if len(got) != 2 || !bWait.didStart || !stale.didStart {
		t.Fatalf("started %v; want b-wait and stale-b", got)
	}
	bWait.finish()
	stale.finish()
	st = h.d.Snapshot()
	if st.ExecutingWidth != 0 || st.Waiting != 0 {
		t.Fatalf("seats leaked: %+v", st)
	}
	for _, l := range st.Levels {
		if l.Name == "b" {
			t.Fatalf("drained removed level still listed: %+v", l)
		}
	}
}

// TestUpdateRecomputesACV: ACVs follow the new shares.
func TestUpdateRecomputesACV(t *testing.T) {
	cfg1 := buildConfig(t, lvl{name: "a", level: 100, shares: 100, queues: 1, limit: 10})
	d := dispatch.New(cfg1, dispatch.Options{ServerConcurrencyLimit: 100})
	if got := levelState(t, d.Snapshot(), "a").AssuredConcurrency; got != 50 {
		t.Fatalf("ACV %d, want ceil(100*100/200) = 50", got)
	}
	d.Update(buildConfig(t, lvl{name: "a", level: 100, shares: 300, queues: 1, limit: 10}))
	if got := levelState(t, d.Snapshot(), "a").AssuredConcurrency; got != 75 {
		t.Fatalf("ACV %d, want ceil(100*300/400) = 75", got)
	}
}
