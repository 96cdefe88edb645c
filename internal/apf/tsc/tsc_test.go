package tsc

import (
	"os"
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

// TestDefaultFollowsTheKernel checks what production does on this machine: Default returns a
// clock exactly where the kernel's clocksource is the TSC. On a VM whose kernel uses
// kvm-clock (or hpet, ...) it refuses, naming the clocksource, and the dispatcher reads the
// monotonic clock instead (time.Since, package dispatch).
func TestDefaultFollowsTheKernel(t *testing.T) {
	source := ""
	if b, err := os.ReadFile(clocksourcePath); err == nil {
		source = strings.TrimSpace(string(b))
	}
	wantClock := runtime.GOOS == "linux" && runtime.GOARCH == "amd64" && source == "tsc"
	c, err := Default()
	switch {
	case (c == nil) == (err == nil):
		t.Fatalf("Default() = %v, %v: want exactly one of a clock and an error", c, err)
	case wantClock && err != nil:
		t.Fatalf("the kernel's clocksource is tsc, yet Default() refuses: %v", err)
	case !wantClock && err == nil:
		t.Fatalf("Default() returned a clock on %s/%s with clocksource %q", runtime.GOOS, runtime.GOARCH, source)
	case err != nil && source != "" && !strings.Contains(err.Error(), source):
		t.Fatalf("Default() refuses with %q, which does not name the clocksource %q", err, source)
	}
	if err == nil {
		t.Logf("production here: the TSC clock, %.4f ns per tick", c.NanosPerTick())
	} else {
		t.Logf("production here: the monotonic clock, since %v", err)
	}
}

// fakeCounter is a counter at ticksPerNano of the monotonic clock, for calibrating without a TSC.
func fakeCounter(ticksPerNano float64) func() int64 {
	base := time.Now()
	return func() int64 { return int64(float64(time.Since(base)) * ticksPerNano) }
}

// TestCalibrateInjectedCounter: calibration recovers a counter's rate, and the clock converts
// readings to the time since the calibration's origin.
func TestCalibrateInjectedCounter(t *testing.T) {
	for _, ghz := range []float64{0.25, 1, 2.1, 3} {
		c, err := calibrate(fakeCounter(ghz), 5*time.Millisecond)
		if err != nil {
			t.Fatalf("calibrating a %v GHz counter: %v", ghz, err)
		}
		if r := c.NanosPerTick() * ghz; r < 0.999 || r > 1.001 {
			t.Errorf("a %v GHz counter calibrated to %.6f ns per tick, want %.6f", ghz, c.NanosPerTick(), 1/ghz)
		}
		oneSecond := c.origin + int64(ghz*1e9)
		if d := c.at(oneSecond) - time.Second; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("a %v GHz counter: %d ticks past the origin read as %v, want 1s", ghz, oneSecond-c.origin, c.at(oneSecond))
		}
		if got := c.at(c.origin); got != 0 {
			t.Errorf("a %v GHz counter: the origin reads as %v, want 0", ghz, got)
		}
	}
}

// TestCalibrateRefusesBadCounters: a counter that does not advance, or at an implausible rate,
// gives no clock.
func TestCalibrateRefusesBadCounters(t *testing.T) {
	for name, read := range map[string]func() int64{
		"stopped":  func() int64 { return 42 },
		"backward": func() int64 { return -fakeCounter(1)() },
		"50 MHz":   fakeCounter(0.05),
		"40 GHz":   fakeCounter(40),
	} {
		if c, err := calibrate(read, 2*time.Millisecond); err == nil {
			t.Errorf("a %s counter calibrated to %.5f ns per tick; want an error", name, c.NanosPerTick())
		}
	}
}

var sink time.Duration

func BenchmarkSystemClock(b *testing.B) {
	base := time.Now()
	for b.Loop() {
		sink += time.Since(base)
	}
}
