package metrics

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const header = `
# HELP apf_operator_current_executing_requests Requests executing, admitted by flow control.
# TYPE apf_operator_current_executing_requests gauge
# HELP apf_operator_current_inqueue_requests Requests waiting in a flow-control queue.
# TYPE apf_operator_current_inqueue_requests gauge
# HELP apf_operator_dispatched_requests_total Requests dispatched for execution by flow control.
# TYPE apf_operator_dispatched_requests_total counter
# HELP apf_operator_rejected_requests_total Requests rejected by flow control, by reason: queue-full, timeout or cancelled.
# TYPE apf_operator_rejected_requests_total counter
`

// recorder records dispatches and finishes through the lock-free methods, the guarded ones,
// or alternately through both.
type recorder struct {
	f             *Flow
	mu            sync.Mutex
	guarded, both bool
	calls         int
}

func (r *recorder) useGuarded() bool {
	r.calls++
	return r.guarded || r.both && r.calls%2 == 0
}

func (r *recorder) dispatched(d time.Duration) {
	if !r.useGuarded() {
		r.f.Dispatched(d)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.f.DispatchedGuarded(d)
}

func (r *recorder) finished(d time.Duration) {
	if !r.useGuarded() {
		r.f.Finished(d)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.f.FinishedGuarded(d)
}

// TestFlowMetrics: the same observations give the same series whether they are recorded
// lock-free, under the guard, or both ways.
func TestFlowMetrics(t *testing.T) {
	for _, mode := range []struct {
		name          string
		guarded, both bool
	}{{"lock-free", false, false}, {"guarded", true, false}, {"mixed", false, true}} {
		t.Run(mode.name, func(t *testing.T) { testFlowMetrics(t, mode.guarded, mode.both) })
	}
}

func testFlowMetrics(t *testing.T, guarded, both bool) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	f := m.Flow("workload-low", "service-accounts")
	if m.Flow("workload-low", "service-accounts") != f {
		t.Fatal("the same label pair resolved to two Flows")
	}
	rec := &recorder{f: f, guarded: guarded, both: both}
	if (guarded || both) && !f.Guard(&rec.mu) {
		t.Fatal("Guard refused the first lock")
	}
	// Three requests dispatched (waits 0, 3 ms, 2 s), two finished (40 ms, 7 s), one still
	// executing; one waiting; one rejected of each reason.
	for i := 0; i < 6; i++ {
		f.Enqueued()
	}
	for i := 0; i < 5; i++ {
		f.Dequeued()
	}
	rec.dispatched(0)
	rec.dispatched(3 * time.Millisecond)
	rec.dispatched(2 * time.Second)
	rec.finished(40 * time.Millisecond)
	rec.finished(7 * time.Second)
	f.RejectedQueueFull()
	f.RejectedTimeout()
	f.RejectedCancelled()
	m.SetLimits("workload-low", 42, 21, 50)

	want := header + `
apf_operator_current_executing_requests{flow_schema="service-accounts",priority_level="workload-low"} 1
apf_operator_current_inqueue_requests{flow_schema="service-accounts",priority_level="workload-low"} 1
apf_operator_dispatched_requests_total{flow_schema="service-accounts",priority_level="workload-low"} 3
apf_operator_rejected_requests_total{flow_schema="service-accounts",priority_level="workload-low",reason="cancelled"} 1
apf_operator_rejected_requests_total{flow_schema="service-accounts",priority_level="workload-low",reason="queue-full"} 1
apf_operator_rejected_requests_total{flow_schema="service-accounts",priority_level="workload-low",reason="timeout"} 1
# HELP apf_operator_assured_concurrency_limit Assured concurrency value (ACV) of a priority level, in width units.
# TYPE apf_operator_assured_concurrency_limit gauge
apf_operator_assured_concurrency_limit{priority_level="workload-low"} 42
# HELP apf_operator_lower_limit_seats Seats a priority level keeps for itself: its ACV less what it may lend, in width units.
# TYPE apf_operator_lower_limit_seats gauge
apf_operator_lower_limit_seats{priority_level="workload-low"} 21
# HELP apf_operator_upper_limit_seats Most seats a priority level may occupy by borrowing: its ACV plus its borrowing limit, in width units.
# TYPE apf_operator_upper_limit_seats gauge
apf_operator_upper_limit_seats{priority_level="workload-low"} 50
`
	if _, err := reg.Gather(); err != nil { // the pedantic registry checks Describe against Collect
		t.Fatal(err)
	}
	names := []string{"apf_operator_current_executing_requests", "apf_operator_current_inqueue_requests",
		"apf_operator_dispatched_requests_total", "apf_operator_rejected_requests_total", "apf_operator_assured_concurrency_limit",
		"apf_operator_lower_limit_seats", "apf_operator_upper_limit_seats"}
	if err := testutil.CollectAndCompare(multi{m.flows, m.assured, m.lower, m.upper}, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}

	wantHist := `
# HELP apf_operator_request_wait_duration_seconds Time a dispatched request waited in its queue.
# TYPE apf_operator_request_wait_duration_seconds histogram
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.001"} 1
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.005"} 2
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.02"} 2
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.05"} 2
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.1"} 2
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.2"} 2
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.5"} 2
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="1"} 2
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="2"} 3
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="5"} 3
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="10"} 3
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="15"} 3
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="30"} 3
apf_operator_request_wait_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="+Inf"} 3
apf_operator_request_wait_duration_seconds_sum{flow_schema="service-accounts",priority_level="workload-low"} 2.003
apf_operator_request_wait_duration_seconds_count{flow_schema="service-accounts",priority_level="workload-low"} 3
# HELP apf_operator_request_execution_duration_seconds Service time of a request admitted by flow control.
# TYPE apf_operator_request_execution_duration_seconds histogram
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.005"} 0
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.01"} 0
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.025"} 0
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.05"} 1
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.1"} 1
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.25"} 1
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="0.5"} 1
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="1"} 1
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="2.5"} 1
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="5"} 1
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="10"} 2
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="30"} 2
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="60"} 2
apf_operator_request_execution_duration_seconds_bucket{flow_schema="service-accounts",priority_level="workload-low",le="+Inf"} 2
apf_operator_request_execution_duration_seconds_sum{flow_schema="service-accounts",priority_level="workload-low"} 7.04
apf_operator_request_execution_duration_seconds_count{flow_schema="service-accounts",priority_level="workload-low"} 2
`
	if err := testutil.CollectAndCompare(m.flows, strings.NewReader(wantHist),
		"apf_operator_request_wait_duration_seconds", "apf_operator_request_execution_duration_seconds"); err != nil {
		t.Fatal(err)
	}

	m.ForgetLevel("workload-low")
	if n := testutil.CollectAndCount(m.assured); n != 0 {
		t.Fatalf("%d ACV series after ForgetLevel, want 0", n)
	}
}

func TestGuardTakesOneLock(t *testing.T) {
	f := newFlow("l", "s")
	var first, second sync.Mutex
	if !f.Guard(&first) {
		t.Fatal("Guard refused the first lock")
	}
	if !f.Guard(&first) {
		t.Fatal("Guard refused, the second time, the lock it was given first")
	}
	if f.Guard(&second) {
		t.Fatal("Guard accepted a second lock")
	}
	var nilFlow *Flow
	if nilFlow.Guard(&first) || f.Guard(nil) {
		t.Fatal("Guard accepted a nil Flow or a nil lock")
	}
	nilFlow.DispatchedGuarded(time.Second) // records nothing, does not panic
	nilFlow.FinishedGuarded(time.Second)
}

// TestGuardedCollectRace: collection reads the guarded counts under their lock while they
// are being recorded (run with -race), and never reports more finished than dispatched (it
// may report more executing than there are: dispatches counted after the finishes were read).
func TestGuardedCollectRace(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := NewMetrics(reg).Flow("l", "s")
	var mu sync.Mutex
	if !f.Guard(&mu) {
		t.Fatal("Guard refused the first lock")
	}
	const n = 2000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			mu.Lock()
			f.DispatchedGuarded(0)
			mu.Unlock()
			f.Dispatched(time.Millisecond)
			mu.Lock()
			f.FinishedGuarded(time.Millisecond)
			mu.Unlock()
			f.Finished(time.Millisecond)
		}
	}()
	for collecting := true; collecting; {
		select {
		case <-done:
			collecting = false
		default:
		}
		if v := executing(t, reg); v < 0 {
			t.Fatalf("executing gauge %v", v)
		}
	}
	if v := executing(t, reg); v != 0 {
		t.Fatalf("executing gauge %v after every request finished", v)
	}
}

// executing returns the executing gauge of the one flow in reg.
func executing(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "apf_operator_current_executing_requests" {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("no executing gauge")
	return 0
}

// TestBucketBoundariesInclusive: a value equal to a bound counts in that bucket (le).
func TestBucketBoundariesInclusive(t *testing.T) {
	f := newFlow("l", "s")
	f.Dispatched(time.Millisecond)
	f.Dispatched(time.Millisecond + 1)
	if f.wait.counts[0].Load() != 1 || f.wait.counts[1].Load() != 1 {
		t.Fatalf("bucket counts %d %d, want 1 1", f.wait.counts[0].Load(), f.wait.counts[1].Load())
	}
}

// TestRegisterTwiceShares: two Metrics on one registry share their counters instead of
// panicking.
func TestRegisterTwiceShares(t *testing.T) {
	reg := prometheus.NewRegistry()
	m1, m2 := NewMetrics(reg), NewMetrics(reg)
	m1.Flow("l", "s").RejectedTimeout()
	m2.Flow("l", "s").RejectedTimeout()
	want := header + `
apf_operator_current_executing_requests{flow_schema="s",priority_level="l"} 0
apf_operator_current_inqueue_requests{flow_schema="s",priority_level="l"} 0
apf_operator_dispatched_requests_total{flow_schema="s",priority_level="l"} 0
apf_operator_rejected_requests_total{flow_schema="s",priority_level="l",reason="cancelled"} 0
apf_operator_rejected_requests_total{flow_schema="s",priority_level="l",reason="queue-full"} 0
apf_operator_rejected_requests_total{flow_schema="s",priority_level="l",reason="timeout"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "apf_operator_current_executing_requests",
		"apf_operator_current_inqueue_requests", "apf_operator_dispatched_requests_total", "apf_operator_rejected_requests_total"); err != nil {
		t.Fatal(err)
	}
}

// multi collects several collectors as one.
type multi []prometheus.Collector

func (m multi) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m {
		c.Describe(ch)
	}
}

func (m multi) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m {
		c.Collect(ch)
	}
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Metrics
	f := m.Flow("l", "s")
	f.Enqueued()
	f.Dispatched(time.Second)
	f.Finished(time.Second)
	f.RejectedQueueFull()
	m.SetLimits("l", 1, 1, 1)
	m.ForgetLevel("l")
	if f != nil {
		t.Fatal("nil Metrics returned a Flow")
	}
}

func BenchmarkFlowFastPathGuarded(b *testing.B) {
	f := NewMetrics(prometheus.NewRegistry()).Flow("l", "s")
	var mu sync.Mutex
	f.Guard(&mu)
	b.ReportAllocs()
	for b.Loop() { // the caller holds the lock anyway; taking it here would measure the lock
		f.DispatchedGuarded(0)
		f.FinishedGuarded(3 * time.Millisecond)
	}
}

func BenchmarkFlowFastPath(b *testing.B) {
	f := NewMetrics(prometheus.NewRegistry()).Flow("l", "s")
	b.ReportAllocs()
	for b.Loop() {
		f.Dispatched(0)
		f.Finished(3 * time.Millisecond)
	}
}
