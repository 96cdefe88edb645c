package coarseclock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/coarseclock"
)

// TestReadingsTrackTheSystemClock: while the clock is read, its readings never go backwards
// and lag a system clock started with it by no more than a bounded amount.
func TestReadingsTrackTheSystemClock(t *testing.T) {
	const period = time.Millisecond
	c := coarseclock.New(period)
	defer c.Stop()
	start := time.Now()
	first := c.Elapsed() // reads the system clock and starts the goroutine
	if first < 0 || first > time.Since(start)+period {
		t.Fatalf("first reading %v, %v after the clock was made", first, time.Since(start))
	}
	last := first
	deadline := time.Now().Add(100 * time.Millisecond)
	var maxLag time.Duration
	for time.Now().Before(deadline) {
		got := c.Elapsed()
		real := time.Since(start)
		if got < last {
			t.Fatalf("reading went backwards: %v after %v", got, last)
		}
		last = got
		maxLag = max(maxLag, real-got)
		time.Sleep(50 * time.Microsecond)
	}
	if !c.Running() {
		t.Fatal("the refreshing goroutine does not run while the clock is read")
	}
	// Generous: the bound is a period plus the goroutine's scheduling delay, which a loaded
	// test machine can stretch.
	if maxLag > 50*period {
		t.Fatalf("readings lagged the system clock by up to %v with a period of %v", maxLag, period)
	}
	if last < 90*time.Millisecond {
		t.Fatalf("after 100ms of readings the clock read %v: it is not refreshed", last)
	}
	t.Logf("largest lag behind the system clock: %v", maxLag)
}

// TestGoroutineExitsWhenIdleAndRestarts: an unread clock stops refreshing after its idle
// periods, and the next reading is exact and restarts it.
func TestGoroutineExitsWhenIdleAndRestarts(t *testing.T) {
	c := coarseclock.NewWithIdle(time.Millisecond, 5)
	defer c.Stop()
	c.Elapsed()
	if !c.Running() {
		t.Fatal("the first reading did not start the refreshing goroutine")
	}
	waitFor(t, func() bool { return !c.Running() }, "the goroutine to exit after 5 idle periods")

	time.Sleep(20 * time.Millisecond) // long enough that a stale reading would show
	before := time.Now()
	got := c.Now()
	if got.Before(before) {
		t.Fatalf("the reading after an idle spell is stale: %v before the system clock's %v", before.Sub(got), before)
	}
	if !c.Running() {
		t.Fatal("a reading of an idle clock did not restart the refreshing goroutine")
	}
}

// TestStopEndsTheGoroutineForGood: after Stop, readings are exact and nothing refreshes.
func TestStopEndsTheGoroutineForGood(t *testing.T) {
	c := coarseclock.New(time.Millisecond)
	c.Elapsed()
	c.Stop()
	c.Stop() // idempotent
	waitFor(t, func() bool { return !c.Running() }, "the goroutine to exit after Stop")
	for range 3 {
		before := time.Now()
		if got := c.Now(); got.Before(before) {
			t.Fatalf("a reading after Stop is stale by %v", before.Sub(got))
		}
		if c.Running() {
			t.Fatal("a reading after Stop restarted the goroutine")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestConcurrentReadersSeeMonotonicTime reads the clock from several goroutines while it
// goes idle and restarts (run it under -race).
func TestConcurrentReadersSeeMonotonicTime(t *testing.T) {
	c := coarseclock.NewWithIdle(100*time.Microsecond, 2)
	defer c.Stop()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last time.Duration
			for i := range 2000 {
				got := c.Elapsed()
				if got < last {
					t.Errorf("goroutine %d: reading went backwards: %v after %v", g, got, last)
					return
				}
				last = got
				if i%200 == 0 {
					time.Sleep(time.Millisecond) // let the goroutine go idle now and then
				}
			}
		}()
	}
	wg.Wait()
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("Timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
