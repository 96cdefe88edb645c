package dispatch

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeExact is an exact clock the test sets by hand.
type fakeExact struct{ t atomic.Int64 }

func (f *fakeExact) now() time.Duration  { return time.Duration(f.t.Load()) }
func (f *fakeExact) set(d time.Duration) { f.t.Store(int64(d)) }
func (f *fakeExact) add(d time.Duration) { f.t.Add(int64(d)) }
func newTestCoarse(f *fakeExact, idle int) *coarseClock {
	c := newCoarseClock(f.now)
	c.tick, c.idle = time.Millisecond, idle
	return c
}

// eventually polls cond until it holds or a generous deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 5s: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestCoarseClockFollowsExactClock: the first reading is exact, later readings follow the exact
// clock within ticks, and no reading is ever ahead of it.
func TestCoarseClockFollowsExactClock(t *testing.T) {
	exact := &fakeExact{}
	exact.set(7 * time.Second)
	c := newTestCoarse(exact, 1000)
	if got := c.now(); got != 7*time.Second {
		t.Fatalf("first reading %v, want the exact 7s (published when the ticker starts)", got)
	}
	exact.add(time.Second)
	eventually(t, "the reading follows the exact clock to 8s", func() bool { return c.now() == 8*time.Second })
	for range 100 {
		if got, ex := c.now(), exact.now(); got > ex {
			t.Fatalf("reading %v ahead of the exact clock %v", got, ex)
		}
	}
}

// TestCoarseClockStopsWhenIdleAndRestarts: the ticker stops after its idle ticks and the next
// reading starts it again with a fresh value, not the value from before it stopped.
func TestCoarseClockStopsWhenIdleAndRestarts(t *testing.T) {
	exact := &fakeExact{}
	c := newTestCoarse(exact, 3)
	c.now()
	if !c.running.Load() {
		t.Fatal("the ticker is not running after a reading")
	}
	eventually(t, "the ticker stops when idle", func() bool { return !c.running.Load() })
	exact.set(time.Hour)
	if got := c.now(); got != time.Hour {
		t.Fatalf("reading after a restart %v, want the fresh 1h", got)
	}
	if !c.running.Load() {
		t.Fatal("the ticker did not restart")
	}
}

// TestCoarseClockReadWhileStopping reads the clock at the moment the ticker decides to stop
// (after its last idle tick cleared the used mark, before it marks itself stopped): the reader
// sees it running and starts nothing, so the ticker must notice the reading and keep running,
// or every later reading would be stale.
func TestCoarseClockReadWhileStopping(t *testing.T) {
	exact := &fakeExact{}
	c := newTestCoarse(exact, 2)
	var once sync.Once
	raced := make(chan struct{})
	c.stopping = func() { once.Do(func() { c.now(); close(raced) }) }
	c.now()
	select {
	case <-raced:
	case <-time.After(5 * time.Second):
		t.Fatal("the ticker never reached its stop")
	}
	exact.set(time.Minute)
	eventually(t, "a reading after the raced stop sees the exact clock's new value",
		func() bool { return c.now() == time.Minute })
}

// TestCoarseClockNeverLeftStopped races readers against the ticker stopping after every idle
// tick: whatever the interleaving, a reading made after the exact clock moved sees the new
// value within ticks, which fails if a reader ever finds the clock marked used but stopped.
func TestCoarseClockNeverLeftStopped(t *testing.T) {
	exact := &fakeExact{}
	c := newTestCoarse(exact, 1)
	for round := 1; round <= 50; round++ {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 200 {
					if got, ex := c.now(), exact.now(); got > ex {
						t.Errorf("reading %v ahead of the exact clock %v", got, ex)
					}
				}
			})
		}
		wg.Wait()
		time.Sleep(time.Duration(round%3) * time.Millisecond) // sometimes let it stop
		want := time.Duration(round) * time.Second
		exact.set(want)
		eventually(t, "a reading sees the exact clock's new value", func() bool { return c.now() == want })
	}
}
