package dispatch_test

import (
	"strings"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch/dispatchtest"
)

func tags(js []*job) string {
	var s []string
	for _, j := range js {
		s = append(s, j.tag)
	}
	return strings.Join(s, ",")
}

// TestLevelChoiceFollowsACV: SCL 10, ACV(A) = ceil(10*30/230) = 2, ACV(B) = ceil(10*100/230) = 5.
// Both lend all their seats, so A can hold every seat; as seats free, B (below its ACV) goes before the higher-priority A (above
// its ACV) until B reaches 5; then no level is below its ACV and the highest, A, goes first.
func TestLevelChoiceFollowsACV(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "a", level: 100, shares: 30, queues: 8, hand: 2, limit: 50, lend: ptr(100)},
		lvl{name: "b", level: 200, shares: 100, queues: 8, hand: 2, limit: 50, lend: ptr(100)})
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 10})
	a, b := schema(t, cfg, "a"), schema(t, cfg, "b")
	st := h.d.Snapshot()
	if acvA, acvB := levelState(t, st, "a").AssuredConcurrency, levelState(t, st, "b").AssuredConcurrency; acvA != 2 || acvB != 5 {
		t.Fatalf("ACV a=%d b=%d, want 2 and 5", acvA, acvB)
	}
	var running []*job
	for i := 0; i < 10; i++ {
		running = append(running, h.submit(a, uint64(i), 1, "a-run"))
	}
	h.takeStarted()
	for i := 0; i < 6; i++ {
		h.submit(b, uint64(100+i), 1, "B")
		if i < 4 {
			h.submit(a, uint64(200+i), 1, "A")
		}
	}
	var order []*job
	for i := 0; i < 10; i++ {
		running[i].finish()
		order = append(order, h.takeStarted()...)
	}
	if got, want := tags(order), "B,B,B,B,B,A,A,A,A,B"; got != want {
		t.Fatalf("dispatch order %s, want %s", got, want)
	}
}

// TestHigherLevelBelowACVGoesFirst: when both levels are below their ACV, the higher one wins
// (both lend everything, so b can first take every seat).
func TestHigherLevelBelowACVGoesFirst(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "a", level: 100, shares: 30, queues: 8, hand: 2, limit: 50, lend: ptr(100)},
		lvl{name: "b", level: 200, shares: 100, queues: 8, hand: 2, limit: 50, lend: ptr(100)})
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 10})
	a, b := schema(t, cfg, "a"), schema(t, cfg, "b")
	var running []*job
	for i := 0; i < 10; i++ { // exempt from nothing: b takes all seats, beyond its ACV
		running = append(running, h.submit(b, uint64(i), 1, "b-run"))
	}
	h.submit(b, 100, 1, "B")
	h.submit(a, 200, 1, "A")
	h.takeStarted()
	running[0].finish()
	if got := tags(h.takeStarted()); got != "A" {
		t.Fatalf("started %q, want A", got)
	}
}

// TestExemptNeverWaits: with every seat taken and requests queued, level-0 requests run at
// once and are not counted against the limit.
func TestExemptNeverWaits(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 1, limit: 10})
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 2})
	l := schema(t, cfg, "l")
	h.submit(l, 1, 2, "run")
	h.submit(l, 2, 1, "queued")
	var exempt []*job
	for i := 0; i < 5; i++ {
		exempt = append(exempt, h.submit(cfg.MastersBackstop, uint64(i), 2, "exempt"))
	}
	for _, j := range exempt {
		if !j.didStart {
			t.Fatal("an exempt request did not start at once")
		}
	}
	st := h.d.Snapshot()
	if st.ExecutingWidth != 2 || st.Waiting != 1 {
		t.Fatalf("executing width %d, waiting %d; want 2 and 1 (exempt requests uncounted)", st.ExecutingWidth, st.Waiting)
	}
	if ex := levelState(t, st, "system-top"); !ex.Exempt || ex.ExecutingWidth != 5 || ex.Waiting != 0 {
		t.Fatalf("exempt level state %+v; want 5 executing", ex)
	}
	for _, j := range exempt {
		j.finish()
		if j.result() != dispatch.Executed {
			t.Fatalf("exempt outcome %v", j.outcome)
		}
	}
}

// TestQueueFullRejectsArrivingExactlyAtLimit: with queue length limit 3, three requests wait
// and the fourth is rejected at once; the three keep their places.
func TestQueueFullRejectsArrivingExactlyAtLimit(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 1, limit: 3})
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 1})
	l := schema(t, cfg, "l")
	run := h.submit(l, 0, 1, "run")
	var waiting []*job
	for i := 0; i < 3; i++ {
		w := h.submit(l, 0, 1, string(rune('a'+i)))
		if w.isDone() {
			t.Fatalf("request %d of 3 rejected below the limit: %v", i+1, w.outcome)
		}
		waiting = append(waiting, w)
	}
	rejected := h.submit(l, 0, 1, "rejected")
	if !rejected.isDone() || rejected.outcome != dispatch.RejectedQueueFull || rejected.outcome.Reason() != "queue-full" {
		t.Fatalf("4th request: done %v outcome %v; want RejectedQueueFull at once", rejected.isDone(), rejected.outcome)
	}
	h.takeStarted()
	run.finish()
	for i, w := range waiting {
		if got := h.takeStarted(); len(got) != 1 || got[0] != w {
			t.Fatalf("started %v, want request %d (the oldest)", got, i)
		}
		w.finish()
	}
}

// TestTimeoutExactlyAtWaitLimit: a request waits until its wait reaches the limit, not a
// nanosecond less; the shared timer rejects it on a quiet server, then re-arms for the next.
func TestTimeoutExactlyAtWaitLimit(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 4, hand: 2, limit: 10})
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 1, WaitLimit: 10 * time.Second})
	l := schema(t, cfg, "l")
	h.submit(l, 0, 1, "run")
	w1 := h.submit(l, 1, 1, "w1")
	h.clock.Step(5 * time.Second)
	w2 := h.submit(l, 2, 1, "w2")
	if n := h.clock.ArmedTimers(); n != 1 {
		t.Fatalf("%d armed timers, want one shared timer", n)
	}
	h.clock.Step(5*time.Second - time.Nanosecond)
	h.settle()
	if w1.isDone() || w2.isDone() {
		t.Fatal("a request was rejected before waiting the limit")
	}
	h.clock.Step(time.Nanosecond)
	if w1.result() != dispatch.RejectedTimeout || w1.outcome.Reason() != "timeout" {
		t.Fatalf("w1 outcome %v, want RejectedTimeout", w1.outcome)
	}
	h.settle()
	if w2.isDone() {
		t.Fatal("w2 rejected 5 s early")
	}
	h.clock.Step(5*time.Second - time.Nanosecond)
	h.settle()
	if w2.isDone() {
		t.Fatal("w2 rejected before its limit")
	}
	h.clock.Step(time.Nanosecond)
	if w2.result() != dispatch.RejectedTimeout {
		t.Fatalf("w2 outcome %v, want RejectedTimeout", w2.outcome)
	}
	h.settle()
	if st := h.d.Snapshot(); st.Waiting != 0 || st.ExecutingWidth != 1 {
		t.Fatalf("after timeouts: waiting %d executing %d; want 0 and 1 (timeouts free nothing)", st.Waiting, st.ExecutingWidth)
	}
}

// silentClock is a fake clock whose timers never fire: only the lazy expiry at admission and
// finish can reject.
type silentClock struct{ *dispatchtest.FakeClock }

type deadTimer struct{}

func (deadTimer) Stop() bool               { return false }
func (deadTimer) Reset(time.Duration) bool { return false }

func (silentClock) AfterFunc(time.Duration, func()) dispatch.Timer { return deadTimer{} }

// TestTimeoutAtAdmissionAndFinish: without the timer, an arrival rejects the requests that
// waited the limit before it is considered, and so does a finish before it dispatches.
func TestTimeoutAtAdmissionAndFinish(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 1, limit: 1})
	clock := silentClock{dispatchtest.NewFakeClock(epoch)}
	h := &harness{t: t, clock: clock.FakeClock,
		d: dispatch.New(cfg, dispatch.Options{ServerConcurrencyLimit: 1, WaitLimit: 10 * time.Second, Clock: clock})}
	l := schema(t, cfg, "l")
	run := h.submit(l, 0, 1, "run")
	w1 := h.submit(l, 0, 1, "w1")
	h.clock.Step(10 * time.Second)
	h.settle()
	if w1.isDone() {
		t.Fatal("w1 rejected without an event")
	}
	// The queue holds one request (its limit): w2 is accepted only because w1 expired first.
	w2 := h.submit(l, 0, 1, "w2")
	if w1.result() != dispatch.RejectedTimeout || w2.isDone() {
		t.Fatalf("w1 %v, w2 done %v; want w1 timed out and w2 waiting", w1.outcome, w2.isDone())
	}
	h.clock.Step(10 * time.Second)
	h.takeStarted()
	run.finish()
	if w2.result() != dispatch.RejectedTimeout {
		t.Fatalf("w2 %v, want RejectedTimeout at the finish that would have dispatched it", w2.outcome)
	}
	if st := h.d.Snapshot(); st.ExecutingWidth != 0 || st.Waiting != 0 {
		t.Fatalf("executing %d waiting %d, want 0", st.ExecutingWidth, st.Waiting)
	}
}

// TestCancelLeavesQueueAtOnce: a cancelled waiting request returns without any time passing,
// its queue shrinks, and no seat is freed (it held none).
func TestCancelLeavesQueueAtOnce(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 1, limit: 10})
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 1})
	l := schema(t, cfg, "l")
	run := h.submit(l, 0, 1, "run")
	w1 := h.submit(l, 0, 1, "w1")
	w2 := h.submit(l, 0, 1, "w2")
	w3 := h.submit(l, 0, 1, "w3")
	w2.cancel()
	if w2.result() != dispatch.RejectedCancelled || w2.outcome.Reason() != "cancelled" || w2.didStart {
		t.Fatalf("w2 %v started %v; want RejectedCancelled without running", w2.outcome, w2.didStart)
	}
	h.settle()
	st := h.d.Snapshot()
	if q := levelState(t, st, "l").Queues; st.Waiting != 2 || st.ExecutingWidth != 1 || len(q) != 1 || q[0].Length != 2 {
		t.Fatalf("after cancel: waiting %d executing %d queues %+v; want 2 waiting, 1 executing", st.Waiting, st.ExecutingWidth, q)
	}
	w4 := h.submit(l, 0, 1, "w4")
	if w4.didStart {
		t.Fatal("a request started in a seat the cancelled request never held")
	}
	h.takeStarted()
	for _, next := range []*job{w1, w3, w4} {
		run.finish()
		if got := h.takeStarted(); len(got) != 1 || got[0] != next {
			t.Fatalf("started %v, want %v", got, next)
		}
		run = next
	}
	run.finish()
	if st := h.d.Snapshot(); st.ExecutingWidth != 0 || st.Waiting != 0 {
		t.Fatalf("executing %d waiting %d, want 0", st.ExecutingWidth, st.Waiting)
	}
}

// TestWideHeadIsNotOvertaken: the queue fair queuing picks holds a mutating request that does
// not fit in the one free seat; a read-only request in another queue waits behind it.
func TestWideHeadIsNotOvertaken(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 8, hand: 1, limit: 10})
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 3})
	l := schema(t, cfg, "l")
	run := h.submit(l, 0, 2, "run")
	h.clock.Step(time.Second)
	wide := h.submit(l, 1, 2, "wide") // its queue starts at R(1 s)
	h.clock.Step(time.Second)
	narrow := h.submit(l, 2, 1, "narrow") // starts later in virtual time
	if wide.didStart || narrow.didStart {
		t.Fatal("a request overtook the wide head")
	}
	h.takeStarted()
	run.finish() // both fit now, dispatched together
	if got := h.takeStarted(); len(got) != 2 || !wide.didStart || !narrow.didStart {
		t.Fatalf("started %v, want wide and narrow", got)
	}
}
