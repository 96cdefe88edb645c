package dispatch

import (
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/metrics"
)

// DefaultWaitLimit is the longest a request waits in a queue by default: a quarter of the
// default one-minute request timeout.
const DefaultWaitLimit = 15 * time.Second

// Options configure a Dispatcher. The zero value of each field selects its default.
type Options struct {
	// ServerConcurrencyLimit is SCL in width units (read-only = 1, mutating = 2); values below
	// 1 mean 1. A request wider than SCL is counted as SCL wide.
	ServerConcurrencyLimit int
	// WaitLimit is the longest a request waits in a queue; 0 means DefaultWaitLimit.
	WaitLimit time.Duration
	// ServiceTimeGuess is the fair-queuing guess G; 0 means fairqueue.DefaultServiceTimeGuess.
	ServiceTimeGuess time.Duration
	// Clock is the time source. nil selects the real time: a coarse clock while no request
	// waits, and while one does, the processor's time-stamp counter where the kernel trusts
	// it (package tsc), else the system clock (see Clocks in the package doc). RealClock is
	// the same without the time-stamp counter. Any other Clock is read at every event.
	Clock Clock
	// Metrics receives the request metrics; nil records none.
	Metrics *metrics.Metrics
}

// Clock is the dispatcher's time source. dispatchtest.FakeClock is a fake for tests.
type Clock interface {
	// Now returns the current time; the dispatcher only subtracts readings.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has elapsed, until stopped or reset.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a timer made by Clock.AfterFunc; *time.Timer is one.
type Timer interface {
	// Stop prevents the call if it has not happened; it reports whether it prevented it.
	Stop() bool
	// Reset makes the timer call its function once d has elapsed from now.
	Reset(d time.Duration) bool
}

// RealClock is the system clock. The dispatcher reads only its monotonic part, directly
// (see Dispatcher.now).
type RealClock struct{}

// Now returns the current time.
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
