package dispatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apf-operator/apf-operator/internal/apf/coarseclock"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/metrics"
)

// TestCoarseClockEnforcesWaitLimit: on a coarse clock that went idle (no goroutine, a stale
// published reading), a request queued behind a long one is still rejected at its wait limit,
// not before and not a wait limit late, and the long request's service time is measured.
func TestCoarseClockEnforcesWaitLimit(t *testing.T) {
	const period, waitLimit = time.Millisecond, 50 * time.Millisecond
	clock := coarseclock.NewWithIdle(period, 2)
	defer clock.Stop()
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 4, hand: 2, limit: 10})
	reg := prometheus.NewRegistry()
	d := dispatch.New(cfg, dispatch.Options{ServerConcurrencyLimit: 1, WaitLimit: waitLimit,
		Clock: dispatch.CoarseClock(clock), Metrics: metrics.NewMetrics(reg)})
	l := schema(t, cfg, "l")
	ctx := context.Background()

	release := make(chan struct{})
	running := make(chan struct{})
	longDone := make(chan dispatch.Outcome)
	go func() {
		longDone <- d.Handle(ctx, &dispatch.Request{Schema: l, FlowHash: 1, Width: 1}, func() {
			close(running)
			<-release
		})
	}()
	<-running
	// Let the clock go idle, so that the next reading must come from the system clock.
	for clock.Running() {
		time.Sleep(period)
	}
	time.Sleep(20 * time.Millisecond)

	start := time.Now()
	out := d.Handle(ctx, &dispatch.Request{Schema: l, FlowHash: 2, Width: 1}, func() {
		t.Error("the queued request ran while the only seat was taken")
	})
	waited := time.Since(start)
	if out != dispatch.RejectedTimeout {
		t.Fatalf("queued request: %v, want RejectedTimeout", out)
	}
	if waited < waitLimit-2*period || waited > waitLimit+time.Second {
		t.Fatalf("rejected after %v with a wait limit of %v and a clock period of %v", waited, waitLimit, period)
	}

	time.Sleep(10 * time.Millisecond)
	close(release)
	if o := <-longDone; o != dispatch.Executed {
		t.Fatalf("long request: %v, want Executed", o)
	}
	// The long request ran for well over 30 ms: its service time lands above the 25 ms bucket.
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range families {
		if mf.GetName() != "apf_operator_request_execution_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if h := m.GetHistogram(); h.GetSampleCount() > 0 {
				found = true
				if h.GetSampleCount() != 1 || h.GetSampleSum() < 0.03 {
					t.Fatalf("execution histogram: %d samples, sum %vs; want 1 sample over 0.03s", h.GetSampleCount(), h.GetSampleSum())
				}
			}
		}
	}
	if !found {
		t.Fatal("no execution duration recorded")
	}
	if st := d.Snapshot(); st.ExecutingWidth != 0 || st.Waiting != 0 {
		t.Fatalf("left over: executing width %d, waiting %d", st.ExecutingWidth, st.Waiting)
	}
}
