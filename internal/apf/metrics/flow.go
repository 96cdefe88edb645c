package metrics

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Flow holds the request counters of one (priority level, FlowSchema) pair. Its methods are
// safe for concurrent use (the Guarded ones under the lock given to Guard) and do nothing on
// a nil *Flow.
//
// Dispatches and finishes are counted twice over: by Dispatched and Finished with atomic
// additions, and by DispatchedGuarded and FinishedGuarded with plain additions under a lock
// the caller holds anyway (the dispatcher's), which saves three atomic additions, about 20 ns,
// per request. Collection adds the two up.
type Flow struct {
	// A request that neither waited nor ran for 5 ms touches only the first 56 bytes: the
	// holders HoldGuarded and ReleaseGuarded read and write, then both sums and the first
	// bucket of both histograms (see guardedCounts). A Flow's size class (512 bytes) is a
	// multiple of 64, so those bytes are one cache line: with a thousand FlowSchemas, the one
	// line of its Flow a request has to fetch (TestFlowRequestPathFitsACacheLine).

	// Holders, for deleting the series (see series.go).
	held     int64        // guarded by *guard: requests in flight held by HoldGuarded
	heldFree atomic.Int64 // requests in flight held by Hold; deletedMark once deleted
	configs  atomic.Int32 // configurations naming the pair; changed under the collector's lock

	guarded guardedCounts              // guarded by *guard
	guard   atomic.Pointer[sync.Mutex] // set once, by Guard

	level, schema string

	managed bool // under the collector's lock: deleted once nothing holds it

	inQueue   atomic.Int64
	wait      histogram // its count is the number dispatched
	execution histogram // its count is the number finished
	rejected  [3]atomic.Uint64
}

// guardedCounts are the guarded wait and execution histograms, laid out for the request path:
// both sums and the first bucket of both histograms are its first 32 bytes, so a request that
// did not wait and ran for less than 5 ms touches one cache line of its Flow.
type guardedCounts struct {
	waitSum, executionSum int64 // nanoseconds
	buckets               [maxBuckets]struct{ wait, execution uint64 }
}

// snapshot returns the histograms of the counts.
func (g *guardedCounts) snapshot() (wait, execution plainHistogram) {
	wait, execution = newPlainHistogram(waitBounds), newPlainHistogram(executionBounds)
	wait.sumNanos, execution.sumNanos = g.waitSum, g.executionSum
	for i := range g.buckets {
		wait.counts[i], execution.counts[i] = g.buckets[i].wait, g.buckets[i].execution
	}
	return wait, execution
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
	f := &Flow{level: level, schema: schema,
		wait:      histogram{bounds: waitBounds, counts: make([]atomic.Uint64, len(waitBounds)+1)},
		execution: histogram{bounds: executionBounds, counts: make([]atomic.Uint64, len(executionBounds)+1)}}
	return f
}

// Guard makes mu the lock held by every call of DispatchedGuarded and FinishedGuarded, which
// collection also takes to read what they counted. A Flow has one guard for good: Guard
// reports whether mu is it (false on a nil Flow, or when another lock was given first; the
// caller then uses Dispatched and Finished).
func (f *Flow) Guard(mu *sync.Mutex) bool {
	if f == nil || mu == nil {
		return false
	}
	return f.guard.CompareAndSwap(nil, mu) || f.guard.Load() == mu
}

// DispatchedGuarded is Dispatched for a caller that holds the lock Guard accepted.
func (f *Flow) DispatchedGuarded(wait time.Duration) {
	if f != nil {
		wait = max(wait, 0)
		f.guarded.buckets[bucket(waitBounds, wait)].wait++
		f.guarded.waitSum += int64(wait)
	}
}

// FinishedGuarded is Finished for a caller that holds the lock Guard accepted.
func (f *Flow) FinishedGuarded(service time.Duration) {
	if f != nil {
		service = max(service, 0)
		f.guarded.buckets[bucket(executionBounds, service)].execution++
		f.guarded.executionSum += int64(service)
	}
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
	// Read the finished counts before the dispatched ones: a request finishes after it is
	// dispatched, so the executing gauge is never negative. The guarded counts are copied
	// together under their lock, so they are consistent with each other.
	wait, execution := f.guardedSnapshot()
	execution.addAtomic(&f.execution)
	wait.addAtomic(&f.wait)
	for i, reason := range []string{ReasonQueueFull, ReasonTimeout, ReasonCancelled} {
		ch <- prometheus.MustNewConstMetric(c.rejected, prometheus.CounterValue,
			float64(f.rejected[i].Load()), f.level, f.schema, reason)
	}
	ch <- prometheus.MustNewConstMetric(c.inQueue, prometheus.GaugeValue, float64(f.inQueue.Load()), f.level, f.schema)
	ch <- prometheus.MustNewConstMetric(c.executing, prometheus.GaugeValue,
		float64(wait.count()-execution.count()), f.level, f.schema)
	ch <- prometheus.MustNewConstMetric(c.dispatched, prometheus.CounterValue, float64(wait.count()), f.level, f.schema)
	ch <- wait.metric(c.wait, f.level, f.schema)
	ch <- execution.metric(c.execution, f.level, f.schema)
}

// guardedSnapshot copies the guarded histograms under their lock.
func (f *Flow) guardedSnapshot() (wait, execution plainHistogram) {
	wait, execution = newPlainHistogram(waitBounds), newPlainHistogram(executionBounds)
	mu := f.guard.Load()
	if mu == nil {
		return wait, execution
	}
	mu.Lock()
	defer mu.Unlock()
	return f.guarded.snapshot()
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
	h.counts[bucket(h.bounds, d)].Add(1)
	if d != 0 {
		h.sumNanos.Add(int64(d))
	}
}

// plainHistogram is a histogram read at collection.
type plainHistogram struct {
	bounds   []time.Duration
	sumNanos int64
	counts   [maxBuckets]uint64 // the first len(bounds)+1 are used
}

// maxBuckets bounds the number of buckets of a histogram, +Inf included.
const maxBuckets = 16

func newPlainHistogram(bounds []time.Duration) plainHistogram {
	return plainHistogram{bounds: bounds}
}

// addAtomic adds a's observations, of the same bounds, to h.
func (h *plainHistogram) addAtomic(a *histogram) {
	for i := range a.counts {
		h.counts[i] += a.counts[i].Load()
	}
	h.sumNanos += a.sumNanos.Load()
}

func (h *plainHistogram) count() uint64 {
	var n uint64
	for _, c := range h.counts[:len(h.bounds)+1] {
		n += c
	}
	return n
}

func (h *plainHistogram) metric(desc *prometheus.Desc, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.bounds))
	var cumulative uint64
	for i, b := range h.bounds {
		cumulative += h.counts[i]
		buckets[b.Seconds()] = cumulative
	}
	cumulative += h.counts[len(h.bounds)]
	return prometheus.MustNewConstHistogram(desc, cumulative, time.Duration(h.sumNanos).Seconds(), buckets, labels...)
}

// bucket returns the index of the first bound at or above d, len(bounds) for +Inf.
func bucket(bounds []time.Duration, d time.Duration) int {
	i := 0
	for i < len(bounds) && d > bounds[i] {
		i++
	}
	return i
}

func bounds(seconds []float64) []time.Duration {
	if len(seconds)+1 > maxBuckets {
		panic("metrics: more buckets than maxBuckets") // a programming error, at package init
	}
	b := make([]time.Duration, len(seconds))
	for i, s := range seconds {
		b[i] = time.Duration(math.Round(s * float64(time.Second)))
	}
	return b
}
