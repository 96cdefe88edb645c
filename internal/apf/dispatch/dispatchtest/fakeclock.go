// Package dispatchtest provides test doubles for the dispatch package.
package dispatchtest

import (
	"sort"
	"sync"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
)

// FakeClock is a dispatch.Clock whose time moves only when a test moves it. Timer functions
// run synchronously in the goroutine that moves the time, after the clock's lock is released
// (unlike k8s.io/utils/clock/testing, whose AfterFunc callbacks run under its lock and so
// cannot read the clock), so once Step returns every due callback has run.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

var _ dispatch.Clock = (*FakeClock)(nil)

// NewFakeClock returns a FakeClock set to t.
func NewFakeClock(t time.Time) *FakeClock { return &FakeClock{now: t} }

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Step moves the time forward by d and runs the timers that became due, earliest first.
func (c *FakeClock) Step(d time.Duration) { c.SetTime(c.Now().Add(d)) }

// SetTime sets the time and runs the timers that became due, earliest first.
func (c *FakeClock) SetTime(t time.Time) {
	c.mu.Lock()
	c.now = t
	var due []*fakeTimer
	for _, tm := range c.timers {
		if tm.armed && !tm.at.After(t) {
			tm.armed = false
			due = append(due, tm)
		}
	}
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, tm := range due {
		tm.f()
	}
}

// AfterFunc arms a timer that calls f once d has elapsed on the fake clock.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) dispatch.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &fakeTimer{clock: c, f: f, at: c.now.Add(d), armed: true}
	c.timers = append(c.timers, tm)
	return tm
}

// ArmedTimers returns the number of timers that will fire when the time reaches them.
func (c *FakeClock) ArmedTimers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, tm := range c.timers {
		if tm.armed {
			n++
		}
	}
	return n
}

type fakeTimer struct {
	clock *FakeClock
	f     func()
	at    time.Time
	armed bool // guarded by clock.mu
}

// Stop disarms the timer and reports whether it was armed.
func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

// Reset arms the timer for d after the fake clock's current time.
func (t *fakeTimer) Reset(d time.Duration) bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := t.armed
	t.at, t.armed = t.clock.now.Add(d), true
	return was
}
