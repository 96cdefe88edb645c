package dispatch_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch/dispatchtest"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// firingClock is a fake clock that counts the calls of its timers' functions.
type firingClock struct {
	*dispatchtest.FakeClock
	fired atomic.Int64
}

func (c *firingClock) AfterFunc(d time.Duration, f func()) dispatch.Timer {
	return c.FakeClock.AfterFunc(d, func() {
		c.fired.Add(1)
		f()
	})
}

// newTimerHarness returns a harness whose dispatcher has one seat, a 10 s wait limit and a
// clock that counts timer firings.
func newTimerHarness(t *testing.T) (*harness, *firingClock, *effective.Config) {
	t.Helper()
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 4, hand: 2, limit: 10})
	clock := &firingClock{FakeClock: dispatchtest.NewFakeClock(epoch)}
	d := dispatch.New(cfg, dispatch.Options{ServerConcurrencyLimit: 1, WaitLimit: 10 * time.Second, Clock: clock})
	return &harness{t: t, d: d, clock: clock.FakeClock}, clock, cfg
}

// TestWaitTimerStoppedWhenNobodyWaits checks that the wait-limit timer is stopped once the
// last waiter leaves, by dispatch or by cancellation, so it never fires for nothing.
func TestWaitTimerStoppedWhenNobodyWaits(t *testing.T) {
	for _, leave := range []string{"dispatched", "cancelled"} {
		t.Run(leave, func(t *testing.T) {
			h, clock, cfg := newTimerHarness(t)
			l := schema(t, cfg, "l")
			long := h.submit(l, 1, 1, "long")
			waiter := h.submit(l, 2, 1, "waiter")
			if n := clock.ArmedTimers(); n != 1 {
				t.Fatalf("%d timers armed while a request waits, want 1", n)
			}
			h.clock.Step(time.Second)
			if leave == "dispatched" {
				long.finish()
			} else {
				waiter.cancel()
				if o := waiter.result(); o != dispatch.RejectedCancelled {
					t.Fatalf("cancelled waiter: %v", o)
				}
				h.settle()
			}
			if n := clock.ArmedTimers(); n != 0 {
				t.Fatalf("%d timers armed after the last waiter was %s, want 0", n, leave)
			}
			h.clock.Step(time.Minute)
			if n := clock.fired.Load(); n != 0 {
				t.Fatalf("the timer fired %d times with nobody waiting", n)
			}
			h.shutdown([]*job{long, waiter})
		})
	}
}

// TestWaitTimerExpiresOnTimeWhenQuiet checks that on a server where nothing else happens a
// waiter is rejected exactly at its wait limit, also after an earlier waiter left and the
// timer was stopped and armed again.
func TestWaitTimerExpiresOnTimeWhenQuiet(t *testing.T) {
	h, clock, cfg := newTimerHarness(t)
	l := schema(t, cfg, "l")
	long := h.submit(l, 1, 1, "long")
	first := h.submit(l, 2, 1, "first")
	first.cancel()
	<-first.done
	h.settle()

	h.clock.Step(3 * time.Second)
	second := h.submit(l, 3, 1, "second") // deadline: 13 s after the epoch
	h.clock.Step(10*time.Second - time.Nanosecond)
	if second.isDone() {
		t.Fatalf("rejected before its wait limit: %v", second.outcome)
	}
	h.clock.Step(time.Nanosecond)
	if o := second.result(); o != dispatch.RejectedTimeout {
		t.Fatalf("at its wait limit: %v, want RejectedTimeout", o)
	}
	h.settle()
	if n := clock.fired.Load(); n != 1 {
		t.Fatalf("the timer fired %d times, want once: at the deadline of the second waiter", n)
	}
	if n := clock.ArmedTimers(); n != 0 {
		t.Fatalf("%d timers armed after the last waiter timed out, want 0", n)
	}
	h.shutdown([]*job{long})
}
