package apf_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/coarseclock"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
)

// TestEngineCoarseClockLeavesNoGoroutine: the optional coarse clock refreshes from a
// goroutine only while requests flow; once they stop, it exits, so an Engine that is no longer
// used leaves nothing running. Waiting requests still time out at their wait limit.
func TestEngineCoarseClockLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	const waitLimit = 30 * time.Millisecond
	e := apf.NewEngine(oneQueueConfig("l"), dispatch.Options{ServerConcurrencyLimit: 1, WaitLimit: waitLimit,
		Clock: dispatch.CoarseClock(coarseclock.New(coarseclock.DefaultPeriod))})
	ctx := context.Background()
	for range 1000 {
		if _, o := e.Handle(ctx, attrs("u", nil, "GET", "/api/v1/namespaces/a/pods"), nil); o != dispatch.Executed {
			t.Fatalf("uncontended request: %v", o)
		}
	}

	release, running := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Handle(ctx, attrs("u", nil, "GET", "/api/v1/namespaces/a/pods"), func() { close(running); <-release })
	}()
	<-running
	start := time.Now()
	_, o := e.Handle(ctx, attrs("u", nil, "GET", "/api/v1/namespaces/a/pods"), nil)
	waited := time.Since(start)
	close(release)
	<-done
	if o != dispatch.RejectedTimeout || waited < waitLimit-2*time.Millisecond {
		t.Fatalf("queued request: %v after %v; want RejectedTimeout after the %v wait limit", o, waited, waitLimit)
	}

	t.Logf("before %d, after the traffic %d", before, runtime.NumGoroutine())
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines left after the traffic stopped, %d before", n, before)
	}
}
