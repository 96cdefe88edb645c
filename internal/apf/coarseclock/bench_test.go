package coarseclock_test

import (
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/coarseclock"
)

var sink time.Duration

// BenchmarkElapsed is one reading of a running coarse clock.
func BenchmarkElapsed(b *testing.B) {
	c := coarseclock.New(0)
	defer c.Stop()
	b.ReportAllocs()
	for b.Loop() {
		sink = c.Elapsed()
	}
}

// BenchmarkSystemClock is the reading it replaces: the monotonic system clock.
func BenchmarkSystemClock(b *testing.B) {
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		sink = time.Since(start)
	}
}
