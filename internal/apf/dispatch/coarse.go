package dispatch

import (
	"sync/atomic"
	"time"
)

// Coarse-clock parameters: how often the ticker publishes the time, and how many ticks
// without a reading stop it.
const (
	coarseTick      = time.Millisecond
	coarseIdleTicks = 1000
)

// coarseClock is a monotonic clock read with two atomic loads, for the requests that never
// wait. A system clock read costs 30–55 ns where the kernel's clocksource is kvm-clock (most
// cloud virtual machines), more than the whole uncontended path; the dispatcher needs one at
// admission and one at finish. Instead, a goroutine publishes a reading of the exact clock
// every coarseTick while the clock is in use, and stops after coarseIdleTicks without a
// reading; the next reading starts it again. A reading is never ahead of the exact clock and
// lags it by one tick plus the ticker goroutine's scheduling delay.
//
// The first reading after each tick marks the clock used (one store per tick); the others
// only load. Whether it runs needs no lock: a reader stores used then loads running, the
// ticker stores running (false, when it stops) then loads used, so at least one of them sees
// the other's store (Go's atomics are sequentially consistent) and the clock is never left
// stopped while read.
type coarseClock struct {
	exact   func() time.Duration
	nanos   atomic.Int64 // the latest published reading of exact
	used    atomic.Bool  // read since the last tick
	running atomic.Bool  // a ticker goroutine publishes
	tick    time.Duration
	idle    int // ticks without a reading before the ticker stops
	// stopping, if set, runs in the ticker just before it marks itself stopped (tests read the
	// clock there, the moment a reading races with the stop).
	stopping func()
}

func newCoarseClock(exact func() time.Duration) *coarseClock {
	return &coarseClock{exact: exact, tick: coarseTick, idle: coarseIdleTicks}
}

// now returns the latest published reading, starting the ticker if it is stopped.
func (c *coarseClock) now() time.Duration {
	if !c.used.Load() {
		c.touch()
	}
	return time.Duration(c.nanos.Load())
}

// touch marks the clock used and starts the ticker if it is stopped, publishing a fresh
// reading first so that the clock is not stale from its last use.
func (c *coarseClock) touch() {
	c.used.Store(true)
	if !c.running.Load() && c.running.CompareAndSwap(false, true) {
		c.publish()
		go c.run()
	}
}

// run publishes the time every tick until the clock has been idle for c.idle ticks.
func (c *coarseClock) run() {
	t := time.NewTicker(c.tick)
	defer t.Stop()
	idle := 0
	for range t.C {
		c.publish()
		if c.used.Swap(false) {
			idle = 0
			continue
		}
		if idle++; idle < c.idle {
			continue
		}
		if c.stopping != nil {
			c.stopping()
		}
		c.running.Store(false)
		if !c.used.Load() || !c.running.CompareAndSwap(false, true) {
			return // idle, or a reader started another ticker
		}
		idle = 0 // read while stopping: keep running
	}
}

// publish stores a reading of the exact clock unless a later one is there already.
func (c *coarseClock) publish() {
	v := int64(c.exact())
	for {
		old := c.nanos.Load()
		if v <= old || c.nanos.CompareAndSwap(old, v) {
			return
		}
	}
}
