// Package coarseclock is a monotonic clock whose reading costs an atomic load instead of a
// system clock read (about 25 ns on a virtual machine, twice per request on the flow-control
// path: more than the rest of the dispatcher).
//
// A Clock keeps the elapsed time since its origin in an atomic variable. One goroutine
// refreshes it every period, but only while the clock is being read: after IdleTicks periods
// without a reading the goroutine exits, and the next reading reads the system clock itself
// (exactly) and starts the goroutine again. So a busy server pays one goroutine wake-up per
// period and an idle one nothing, and no goroutine outlives the traffic by more than
// IdleTicks periods. Stop ends the goroutine for good; the clock then reads the system clock
// every time.
//
// A reading costs about 2 ns, against about 25 ns for time.Since on the virtual machines the
// benchmarks ran on (BenchmarkElapsed, BenchmarkSystemClock).
//
// # Accuracy
//
// While the goroutine runs, a reading lags the system clock by at most the period plus the
// scheduling delay of the goroutine (normally well under a period), and readings never go
// backwards. A duration measured as the difference of two readings is off by less than that
// lag either way, and is exact on average (the lag of both readings has the same
// distribution). For the flow-control dispatcher this means: the wait limit is enforced
// within a period (early or late), wait and service times in the metrics and the
// service-time correction of fair queuing have a resolution of one period, and events within
// one period are ordered by arrival but see no time pass between them.
//
// The goroutine's wake-ups are one more timer in the process. In the overload scenarios of
// test/benchmark, whose clients are all driven by timers (sleeps), they raised the light
// flows' 99th-percentile wait by a few milliseconds (an unrelated 1 ms ticker does the same);
// fairness was unchanged.
package coarseclock

import (
	"sync"
	"sync/atomic"
	"time"
)

// DefaultPeriod is the default refresh period.
const DefaultPeriod = time.Millisecond

// DefaultIdleTicks is the default number of periods without a reading after which the
// refreshing goroutine exits.
const DefaultIdleTicks = 100

// Clock is a coarse monotonic clock (see the package doc); dispatch.CoarseClock makes it the
// dispatcher's clock. Its methods are safe for concurrent use.
type Clock struct {
	period    time.Duration
	idleTicks int
	origin    time.Time // carries a monotonic reading

	elapsed atomic.Int64 // nanoseconds since origin at the last refresh
	running atomic.Bool  // the refreshing goroutine runs, so elapsed is fresh
	read    atomic.Bool  // the clock was read since the goroutine's last tick
	stopped atomic.Bool

	mu   sync.Mutex // guards done and the start of the goroutine after Stop
	done chan struct{}
}

// New returns a clock refreshed every period (DefaultPeriod when period <= 0) whose goroutine
// exits after DefaultIdleTicks periods without a reading.
func New(period time.Duration) *Clock {
	return NewWithIdle(period, DefaultIdleTicks)
}

// NewWithIdle is New with the number of idle periods after which the goroutine exits (at
// least 1).
func NewWithIdle(period time.Duration, idleTicks int) *Clock {
	if period <= 0 {
		period = DefaultPeriod
	}
	return &Clock{period: period, idleTicks: max(idleTicks, 1), origin: time.Now(), done: make(chan struct{})}
}

// Period returns the refresh period.
func (c *Clock) Period() time.Duration { return c.period }

// Elapsed returns the time since the clock's origin, as of the last refresh.
func (c *Clock) Elapsed() time.Duration {
	if !c.read.Load() {
		c.read.Store(true) // written once per period, not once per reading
	}
	if c.running.Load() {
		return time.Duration(c.elapsed.Load())
	}
	return c.wake()
}

// Now returns the clock's reading as a time; subtracting two readings uses their monotonic
// parts.
func (c *Clock) Now() time.Time { return c.origin.Add(c.Elapsed()) }

// Running reports whether the refreshing goroutine runs.
func (c *Clock) Running() bool { return c.running.Load() }

// Stop ends the refreshing goroutine; later readings read the system clock. It is idempotent.
func (c *Clock) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped.Swap(true) {
		return
	}
	close(c.done)
}

// wake reads the system clock, publishes the reading and starts the refreshing goroutine.
func (c *Clock) wake() time.Duration {
	now := c.advance()
	if !c.stopped.Load() && c.running.CompareAndSwap(false, true) {
		go c.refresh()
	}
	return now
}

// advance publishes the system clock's reading unless a later one is already published, and
// returns the published value.
func (c *Clock) advance() time.Duration {
	now := int64(time.Since(c.origin))
	for {
		old := c.elapsed.Load()
		if now <= old {
			return time.Duration(old)
		}
		if c.elapsed.CompareAndSwap(old, now) {
			return time.Duration(now)
		}
	}
}

// refresh publishes the time every period until the clock goes unread for idleTicks periods
// or is stopped.
func (c *Clock) refresh() {
	ticker := time.NewTicker(c.period)
	defer ticker.Stop()
	for idle := 0; ; {
		select {
		case <-ticker.C:
		case <-c.done:
			c.running.Store(false)
			return
		}
		c.advance()
		if c.read.Swap(false) {
			idle = 0
			continue
		}
		if idle++; idle >= c.idleTicks {
			// A reading that saw running before this store got the value published above,
			// at most one period old; later readings read the system clock.
			c.running.Store(false)
			return
		}
	}
}
