package dispatch_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/metrics"
)

// TestMetricsOfEveryOutcome drives one request to each outcome on a fake clock and checks
// every metric the dispatcher records.
func TestMetricsOfEveryOutcome(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 10, queues: 1, limit: 1})
	reg := prometheus.NewPedanticRegistry()
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 1, WaitLimit: 10 * time.Second,
		Metrics: metrics.NewMetrics(reg)})
	l := schema(t, cfg, "l")

	run := h.submit(l, 0, 1, "run") // dispatched at once
	waiter := h.submit(l, 0, 1, "waiter")
	if full := h.submit(l, 0, 1, "full"); full.result() != dispatch.RejectedQueueFull {
		t.Fatalf("outcome %v, want RejectedQueueFull", full.outcome)
	}
	h.clock.Step(2 * time.Second)
	run.finish() // ran 2 s; the waiter waited 2 s
	h.clock.Step(3 * time.Millisecond)
	timedOut := h.submit(l, 0, 1, "timed-out")
	h.clock.Step(10 * time.Second)
	if timedOut.result() != dispatch.RejectedTimeout {
		t.Fatalf("outcome %v, want RejectedTimeout", timedOut.outcome)
	}
	cancelled := h.submit(l, 0, 1, "cancelled")
	cancelled.cancel()
	if cancelled.result() != dispatch.RejectedCancelled {
		t.Fatalf("outcome %v, want RejectedCancelled", cancelled.outcome)
	}
	exempt := h.submit(cfg.MastersBackstop, 0, 1, "exempt")
	h.settle()
	// Still executing: the waiter (level l) and the exempt request.
	const lbl = `flow_schema="l",priority_level="l"`
	const ex = `flow_schema="system-top",priority_level="system-top"`
	const catchAll = `flow_schema="non-top-backstop",priority_level="l"` // resolved, never used
	want := fmt.Sprintf(`
# HELP apf_operator_assured_concurrency_limit Assured concurrency value (ACV) of a priority level, in width units.
# TYPE apf_operator_assured_concurrency_limit gauge
apf_operator_assured_concurrency_limit{priority_level="l"} 1
# HELP apf_operator_current_executing_requests Requests executing, admitted by flow control.
# TYPE apf_operator_current_executing_requests gauge
apf_operator_current_executing_requests{%[1]s} 1
apf_operator_current_executing_requests{%[3]s} 0
apf_operator_current_executing_requests{%[2]s} 1
# HELP apf_operator_current_inqueue_requests Requests waiting in a flow-control queue.
# TYPE apf_operator_current_inqueue_requests gauge
apf_operator_current_inqueue_requests{%[1]s} 0
apf_operator_current_inqueue_requests{%[3]s} 0
apf_operator_current_inqueue_requests{%[2]s} 0
# HELP apf_operator_dispatched_requests_total Requests dispatched for execution by flow control.
# TYPE apf_operator_dispatched_requests_total counter
apf_operator_dispatched_requests_total{%[1]s} 2
apf_operator_dispatched_requests_total{%[3]s} 0
apf_operator_dispatched_requests_total{%[2]s} 1
# HELP apf_operator_rejected_requests_total Requests rejected by flow control, by reason: queue-full, timeout or cancelled.
# TYPE apf_operator_rejected_requests_total counter
apf_operator_rejected_requests_total{%[1]s,reason="cancelled"} 1
apf_operator_rejected_requests_total{%[1]s,reason="queue-full"} 1
apf_operator_rejected_requests_total{%[1]s,reason="timeout"} 1
apf_operator_rejected_requests_total{%[3]s,reason="cancelled"} 0
apf_operator_rejected_requests_total{%[3]s,reason="queue-full"} 0
apf_operator_rejected_requests_total{%[3]s,reason="timeout"} 0
apf_operator_rejected_requests_total{%[2]s,reason="cancelled"} 0
apf_operator_rejected_requests_total{%[2]s,reason="queue-full"} 0
apf_operator_rejected_requests_total{%[2]s,reason="timeout"} 0
`, lbl, ex, catchAll)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "apf_operator_assured_concurrency_limit",
		"apf_operator_current_executing_requests", "apf_operator_current_inqueue_requests",
		"apf_operator_dispatched_requests_total", "apf_operator_rejected_requests_total"); err != nil {
		t.Fatal(err)
	}
	waiter.finish()
	exempt.finish()
	wantDurations := fmt.Sprintf(`
# HELP apf_operator_request_execution_duration_seconds Service time of a request admitted by flow control.
# TYPE apf_operator_request_execution_duration_seconds histogram
apf_operator_request_execution_duration_seconds_sum{%[1]s} 12.003
apf_operator_request_execution_duration_seconds_count{%[1]s} 2
# HELP apf_operator_request_wait_duration_seconds Time a dispatched request waited in its queue.
# TYPE apf_operator_request_wait_duration_seconds histogram
apf_operator_request_wait_duration_seconds_sum{%[1]s} 2
apf_operator_request_wait_duration_seconds_count{%[1]s} 2
`, lbl)
	if err := compareSumsAndCounts(reg, wantDurations); err != nil {
		t.Fatal(err)
	}
}

// compareSumsAndCounts compares the _sum and _count of the histograms of schema l at level l.
func compareSumsAndCounts(reg prometheus.Gatherer, want string) error {
	families, err := reg.Gather()
	if err != nil {
		return err
	}
	var got []string
	for _, mf := range families {
		name := mf.GetName()
		if !strings.HasSuffix(name, "_duration_seconds") {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() != "l" || m.GetLabel()[1].GetValue() != "l" {
				continue
			}
			got = append(got, fmt.Sprintf("%s_sum %g", name, m.GetHistogram().GetSampleSum()),
				fmt.Sprintf("%s_count %d", name, m.GetHistogram().GetSampleCount()))
		}
	}
	var wantLines []string
	for _, line := range strings.Split(want, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, _ := strings.Cut(line, " ")
		name = name[:strings.Index(name, "{")]
		wantLines = append(wantLines, name+" "+value)
	}
	if strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		return fmt.Errorf("histograms:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
	return nil
}
