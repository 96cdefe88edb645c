package tsc

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestTrustedSource(t *testing.T) {
	for _, c := range []struct {
		contents string
		ok       bool
	}{{"tsc\n", true}, {"tsc", true}, {"kvm-clock\n", false}, {"hpet\n", false}, {"", false}, {"tsc-early\n", false}} {
		if err := trustedSource(c.contents); (err == nil) != c.ok {
			t.Errorf("trustedSource(%q) = %v, want ok=%v", c.contents, err, c.ok)
		} else if err != nil && !strings.Contains(err.Error(), "clocksource") {
			t.Errorf("trustedSource(%q): error %q does not name the clocksource", c.contents, err)
		}
	}
}

// defaultOrSkip returns the process clock, skipping (visibly) where the kernel does not use
// the TSC; TestDefaultUnavailableHasReason covers that case.
func defaultOrSkip(t *testing.T) *Clock {
	t.Helper()
	c, err := Default()
	if err != nil {
		t.Skipf("no TSC clock on this machine: %v", err)
	}
	return c
}

func TestDefaultUnavailableHasReason(t *testing.T) {
	c, err := Default()
	if (c == nil) == (err == nil) {
		t.Fatalf("Default() = %v, %v: want exactly one of a clock and an error", c, err)
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		if err == nil {
			t.Fatalf("Default() on %s/%s returned a clock", runtime.GOOS, runtime.GOARCH)
		}
	}
	if err == nil {
		t.Logf("TSC clock: %.4f ns per tick", c.NanosPerTick())
	} else {
		t.Logf("no TSC clock: %v", err)
	}
}

func TestElapsedAgreesWithSystemClock(t *testing.T) {
	c := defaultOrSkip(t)
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
	c := defaultOrSkip(t)
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
	defaultOrSkip(t)
	c, err := calibrate(time.Millisecond)
	if err != nil {
		t.Fatalf("calibrate(1ms): %v", err)
	}
	d, _ := Default()
	if r := c.NanosPerTick() / d.NanosPerTick(); r < 0.99 || r > 1.01 {
		t.Fatalf("a 1 ms calibration gives %.5f ns/tick, the 20 ms one %.5f", c.NanosPerTick(), d.NanosPerTick())
	}
}

var sink time.Duration

func BenchmarkElapsed(b *testing.B) {
	c, err := Default()
	if err != nil {
		b.Skipf("no TSC clock: %v", err)
	}
	for b.Loop() {
		sink += c.Elapsed()
	}
}

func BenchmarkSystemClock(b *testing.B) {
	base := time.Now()
	for b.Loop() {
		sink += time.Since(base)
	}
}
