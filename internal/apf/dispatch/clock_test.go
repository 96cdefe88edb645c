package dispatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/metrics"
)

// TestDefaultClockEnforcesWaitLimit runs on the default clock (the time-stamp counter where
// the kernel trusts it, else the system clock), whose readings the wait-limit timer must agree
// with: a request queued behind a long one is rejected at its wait limit, not before and not
// much later, and the long request's service time is measured.
func TestDefaultClockEnforcesWaitLimit(t *testing.T) {
	const waitLimit = 50 * time.Millisecond
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 4, hand: 2, limit: 10})
	reg := prometheus.NewRegistry()
	d := dispatch.New(cfg, dispatch.Options{ServerConcurrencyLimit: 1, WaitLimit: waitLimit,
		Metrics: metrics.NewMetrics(reg)})
	l := schema(t, cfg, "l")
	ctx := context.Background()

	release, running := make(chan struct{}), make(chan struct{})
	longDone := make(chan dispatch.Outcome)
	go func() {
		longDone <- d.Handle(ctx, &dispatch.Request{Schema: l, FlowHash: 1, Width: 1}, func() {
			close(running)
			<-release
		})
	}()
	<-running

	start := time.Now()
	out := d.Handle(ctx, &dispatch.Request{Schema: l, FlowHash: 2, Width: 1}, func() {
		t.Error("the queued request ran while the only seat was taken")
	})
	waited := time.Since(start)
	if out != dispatch.RejectedTimeout {
		t.Fatalf("queued request: %v, want RejectedTimeout", out)
	}
	if waited < waitLimit || waited > waitLimit+time.Second {
		t.Fatalf("rejected after %v with a wait limit of %v", waited, waitLimit)
	}

	close(release)
	if o := <-longDone; o != dispatch.Executed {
		t.Fatalf("long request: %v, want Executed", o)
	}
	// The long request ran for at least the wait limit. It started and ended while nothing
	// waited, so the coarse clock timed it: each reading lags by up to a tick (1 ms) plus the
	// ticker's scheduling delay, hence the margin.
	const minService = waitLimit - 10*time.Millisecond
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var samples uint64
	for _, mf := range families {
		if mf.GetName() != "apf_operator_request_execution_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if h := m.GetHistogram(); h.GetSampleCount() > 0 {
				samples += h.GetSampleCount()
				if h.GetSampleCount() != 1 || h.GetSampleSum() < minService.Seconds() {
					t.Fatalf("execution histogram: %d samples, sum %vs; want 1 sample over %v", h.GetSampleCount(), h.GetSampleSum(), minService)
				}
			}
		}
	}
	if samples != 1 {
		t.Fatalf("%d execution durations recorded, want 1", samples)
	}
	if st := d.Snapshot(); st.ExecutingWidth != 0 || st.Waiting != 0 {
		t.Fatalf("left over: executing width %d, waiting %d", st.ExecutingWidth, st.Waiting)
	}
}

// TestDefaultClockMeasuresUncontendedService: a request that never waits is timed by the
// coarse clock, which must still measure its service time (to about a millisecond): a clock
// that stopped ticking would record zero.
func TestDefaultClockMeasuresUncontendedService(t *testing.T) {
	const service = 50 * time.Millisecond
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 4, hand: 2, limit: 10})
	reg := prometheus.NewRegistry()
	d := dispatch.New(cfg, dispatch.Options{ServerConcurrencyLimit: 4, Metrics: metrics.NewMetrics(reg)})
	r := &dispatch.Request{Schema: schema(t, cfg, "l"), FlowHash: 1, Width: 1}
	for range 3 {
		if out := d.Handle(context.Background(), r, func() { time.Sleep(service) }); out != dispatch.Executed {
			t.Fatalf("outcome %v, want Executed", out)
		}
	}
	count, sum := executionHistogram(t, reg)
	// Each sleep lasts at least 50 ms; each reading lags the exact clock by a tick plus the
	// ticker's scheduling delay, so allow half of it on a busy machine, and a second on top.
	if count != 3 || sum < 3*service.Seconds()/2 || sum > 3*service.Seconds()+1 {
		t.Fatalf("execution histogram: %d samples, sum %.4fs; want 3 samples summing to about %.2fs",
			count, sum, 3*service.Seconds())
	}
}

// executionHistogram returns the sample count and sum of every execution-duration series.
func executionHistogram(t *testing.T, reg prometheus.Gatherer) (count uint64, sum float64) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != "apf_operator_request_execution_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			count += m.GetHistogram().GetSampleCount()
			sum += m.GetHistogram().GetSampleSum()
		}
	}
	return count, sum
}
