package apf

import (
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
)

// Clock is a time source for the filter's queues.
type Clock interface {
	// Now returns the current time; the filter only subtracts readings.
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

// SystemClock is the system clock (time.Now, time.AfterFunc).
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// clockAdapter presents a Clock as the engine's clock.
type clockAdapter struct{ c Clock }

func (a clockAdapter) Now() time.Time { return a.c.Now() }

func (a clockAdapter) AfterFunc(d time.Duration, f func()) dispatch.Timer { return a.c.AfterFunc(d, f) }

// dispatchClock converts c: nil stays nil (the fastest clock), SystemClock becomes the engine's
// own system clock, anything else is adapted.
func dispatchClock(c Clock) dispatch.Clock {
	switch c.(type) {
	case nil:
		return nil
	case SystemClock, *SystemClock:
		return dispatch.RealClock{}
	}
	return clockAdapter{c}
}
