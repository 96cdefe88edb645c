package tsc

import (
	"testing"
	"time"
)

// These tests read the real counter on every amd64 machine, VMs included: RDTSC is readable
// where the kernel does not use it as its clocksource (kvm-clock), so the calibration and the
// readings the dispatcher uses where the kernel does are tested here too, instead of skipping.

// realClock calibrates the real counter as Default does, without asking the kernel.
func realClock(t testing.TB) *Clock {
	t.Helper()
	c, err := calibrate(ticks, calibrationWindow)
	if err != nil {
		t.Fatalf("calibrating the time-stamp counter: %v", err)
	}
	return c
}

func TestElapsedAgreesWithSystemClock(t *testing.T) {
	c := realClock(t)
	// Each TSC reading is bracketed by two system clock readings, so preemption between the
	// readings widens the bounds instead of failing the test.
	before0 := time.Now()
	e0 := c.Elapsed()
	after0 := time.Now()
	time.Sleep(100 * time.Millisecond)
	before1 := time.Now()
	e1 := c.Elapsed()
	after1 := time.Now()
	// The calibration error is a few parts per million: 10 µs over 100 ms is 100 ppm.
	const tolerance = 10 * time.Microsecond
	low, high := before1.Sub(after0)-tolerance, after1.Sub(before0)+tolerance
	if got := e1 - e0; got < low || got > high {
		t.Fatalf("TSC measured %v where the system clock measured between %v and %v", got, low, high)
	}
}

func TestElapsedNeverDecreases(t *testing.T) {
	c := realClock(t)
	last := c.Elapsed()
	for i := range 1_000_000 {
		now := c.Elapsed()
		if now < last {
			t.Fatalf("reading %d went back from %v to %v", i, last, now)
		}
		last = now
	}
}

func TestCalibrateShortWindow(t *testing.T) {
	long := realClock(t)
	c, err := calibrate(ticks, time.Millisecond)
	if err != nil {
		t.Fatalf("calibrate(1ms): %v", err)
	}
	if r := c.NanosPerTick() / long.NanosPerTick(); r < 0.99 || r > 1.01 {
		t.Fatalf("a 1 ms calibration gives %.5f ns/tick, the 20 ms one %.5f", c.NanosPerTick(), long.NanosPerTick())
	}
}

func BenchmarkElapsed(b *testing.B) {
	c := realClock(b)
	for b.Loop() {
		sink += c.Elapsed()
	}
}
