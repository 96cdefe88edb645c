package tsc

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Clock reads elapsed time from the time-stamp counter. It is safe for concurrent use.
type Clock struct {
	origin    int64   // counter at the calibration's first reference reading
	nsPerTick float64 // nanoseconds per counter tick
}

// Elapsed returns the time since the clock's origin. Readings on one goroutine never
// decrease; readings on different CPUs are as consistent as the kernel's own (see the
// package doc).
func (c *Clock) Elapsed() time.Duration { return c.at(ticks()) }

// at converts a counter reading to the time since the clock's origin.
func (c *Clock) at(tick int64) time.Duration {
	return time.Duration(float64(tick-c.origin) * c.nsPerTick)
}

// NanosPerTick returns the calibrated length of one counter tick.
func (c *Clock) NanosPerTick() float64 { return c.nsPerTick }

var (
	defaultOnce  sync.Once
	defaultClock *Clock
	defaultErr   error
)

// calibrationWindow is the time between the two reference readings of the calibration.
const calibrationWindow = 20 * time.Millisecond

// Default returns the process's calibrated TSC clock, or the reason the counter cannot be
// trusted here. The first call calibrates (about 20 ms); later calls return the same result.
func Default() (*Clock, error) {
	defaultOnce.Do(func() {
		if err := trusted(); err != nil {
			defaultErr = err
			return
		}
		defaultClock, defaultErr = calibrate(ticks, calibrationWindow)
	})
	return defaultClock, defaultErr
}

// errUnsupported is returned where the counter cannot be read or its quality is unknown.
var errUnsupported = errors.New("tsc: the time-stamp counter is only used on amd64 Linux")

// calibrate measures the rate of the counter read (ticks, or a test's) against the monotonic
// clock over window.
func calibrate(read func() int64, window time.Duration) (*Clock, error) {
	base := time.Now()
	t0, m0 := reference(read, base)
	time.Sleep(window)
	t1, m1 := reference(read, base)
	if t1 <= t0 || m1 <= m0 {
		return nil, fmt.Errorf("tsc: the counter did not advance with the clock (%d ticks in %v)", t1-t0, m1-m0)
	}
	c := &Clock{origin: t0, nsPerTick: float64(m1-m0) / float64(t1-t0)}
	if ghz := 1 / c.nsPerTick; ghz < 0.1 || ghz > 20 {
		return nil, fmt.Errorf("tsc: implausible counter rate %.3f GHz", ghz)
	}
	return c, nil
}

// referenceTries is how many reference readings calibrate takes at each end, keeping the
// one read in the shortest interval between two counter readings.
const referenceTries = 16

// reference returns a counter reading and the monotonic time since base taken at the same
// moment, within the shortest of referenceTries intervals between two counter readings.
func reference(read func() int64, base time.Time) (tick int64, mono time.Duration) {
	best := int64(-1)
	for range referenceTries {
		before := read()
		m := time.Since(base)
		after := read()
		if span := after - before; span >= 0 && (best < 0 || span < best) {
			best, tick, mono = span, before+span/2, m
		}
	}
	return tick, mono
}

// trustedSource reports whether the kernel clocksource named by the contents of
// clocksourcePath is the TSC.
func trustedSource(contents string) error {
	if src := strings.TrimSpace(contents); src != "tsc" {
		return fmt.Errorf("tsc: the kernel's clocksource is %q, not tsc", src)
	}
	return nil
}
