package metrics

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Flow holds the request counters of one (priority level, FlowSchema) pair. Its methods are
// safe for concurrent use and do nothing on a nil *Flow.
type Flow struct {
	level, schema string

	inQueue   atomic.Int64
	wait      histogram // its count is the number dispatched
	execution histogram // its count is the number finished
	rejected  [3]atomic.Uint64
}

// Rejection reasons, indexes of Flow.rejected.
const (
	rejectedQueueFull = iota
	rejectedTimeout
	rejectedCancelled
)

var (
	waitBounds      = bounds(WaitBuckets)
	executionBounds = bounds(ExecutionBuckets)
)

func newFlow(level, schema string) *Flow {
	return &Flow{level: level, schema: schema,
		wait:      histogram{bounds: waitBounds, counts: make([]atomic.Uint64, len(waitBounds)+1)},
		execution: histogram{bounds: executionBounds, counts: make([]atomic.Uint64, len(executionBounds)+1)}}
}

// Enqueued records a request that joined a queue.
func (f *Flow) Enqueued() {
	if f != nil {
		f.inQueue.Add(1)
	}
}

// Dequeued records a request that left its queue (dispatched or rejected).
func (f *Flow) Dequeued() {
	if f != nil {
		f.inQueue.Add(-1)
	}
}

// Dispatched records a request dispatched for execution after waiting wait.
func (f *Flow) Dispatched(wait time.Duration) {
	if f != nil {
		f.wait.observe(wait)
	}
}

// Finished records a dispatched request that finished after the given service time.
func (f *Flow) Finished(service time.Duration) {
	if f != nil {
		f.execution.observe(service)
	}
}

// RejectedQueueFull records a request rejected because its queue was full.
func (f *Flow) RejectedQueueFull() { f.reject(rejectedQueueFull) }

// RejectedTimeout records a request rejected after waiting the wait limit.
func (f *Flow) RejectedTimeout() { f.reject(rejectedTimeout) }

// RejectedCancelled records a request whose context was cancelled while it waited.
func (f *Flow) RejectedCancelled() { f.reject(rejectedCancelled) }

func (f *Flow) reject(reason int) {
	if f != nil {
		f.rejected[reason].Add(1)
	}
}

func (f *Flow) collect(c *flowCollector, ch chan<- prometheus.Metric) {
	// Read the finished count before the dispatched one: a request finishes after it is
	// dispatched, so the executing gauge is never negative.
	finished := f.execution.count()
	execution := f.execution.metric(c.execution, f.level, f.schema)
	wait := f.wait.metric(c.wait, f.level, f.schema)
	dispatched := f.wait.count()
	for i, reason := range []string{ReasonQueueFull, ReasonTimeout, ReasonCancelled} {
		ch <- prometheus.MustNewConstMetric(c.rejected, prometheus.CounterValue,
			float64(f.rejected[i].Load()), f.level, f.schema, reason)
	}
	ch <- prometheus.MustNewConstMetric(c.inQueue, prometheus.GaugeValue, float64(f.inQueue.Load()), f.level, f.schema)
	ch <- prometheus.MustNewConstMetric(c.executing, prometheus.GaugeValue, float64(dispatched-finished), f.level, f.schema)
	ch <- prometheus.MustNewConstMetric(c.dispatched, prometheus.CounterValue, float64(dispatched), f.level, f.schema)
	ch <- wait
	ch <- execution
}

// histogram is a fixed-bucket histogram of durations: one atomic addition per observation in
// a bucket, one more for the sum when the value is not zero.
type histogram struct {
	bounds   []time.Duration // upper bounds, inclusive
	counts   []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sumNanos atomic.Int64
}

func (h *histogram) observe(d time.Duration) {
	d = max(d, 0)
	i := 0
	for i < len(h.bounds) && d > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	if d != 0 {
		h.sumNanos.Add(int64(d))
	}
}

func (h *histogram) count() uint64 {
	var n uint64
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	return n
}

func (h *histogram) metric(desc *prometheus.Desc, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.bounds))
	var cumulative uint64
	for i, b := range h.bounds {
		cumulative += h.counts[i].Load()
		buckets[b.Seconds()] = cumulative
	}
	cumulative += h.counts[len(h.bounds)].Load()
	sum := time.Duration(h.sumNanos.Load()).Seconds()
	return prometheus.MustNewConstHistogram(desc, cumulative, sum, buckets, labels...)
}

func bounds(seconds []float64) []time.Duration {
	b := make([]time.Duration, len(seconds))
	for i, s := range seconds {
		b[i] = time.Duration(math.Round(s * float64(time.Second)))
	}
	return b
}
