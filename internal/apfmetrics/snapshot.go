package apfmetrics

import (
	"math"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// kube-apiserver's APF metric families read here (k8s.io/apiserver pkg/util/flowcontrol/metrics).
const (
	NominalSeatsMetric      = Prefix + "nominal_limit_seats"
	LowerSeatsMetric        = Prefix + "lower_limit_seats"
	UpperSeatsMetric        = Prefix + "upper_limit_seats"
	CurrentLimitSeatsMetric = Prefix + "current_limit_seats"
	RejectedMetric          = Prefix + "rejected_requests_total"
	DispatchedMetric        = Prefix + "dispatched_requests_total"
	InQueueMetric           = Prefix + "current_inqueue_requests"
	ExecutingMetric         = Prefix + "current_executing_requests"
	ExecutingSeatsMetric    = Prefix + "current_executing_seats"
	WaitMetric              = Prefix + "request_wait_duration_seconds"
	// DemandMetric is a timing-ratio histogram per level of (seats the level could use:
	// executing plus queued) / (its nominal seats), weighted by time (nanoseconds).
	DemandMetric = Prefix + "demand_seats"
	// The gauges of the last 10 s adjustment period of each level's seat demand, in seats.
	DemandHighWatermarkMetric = Prefix + "demand_seats_high_watermark"
	DemandAverageMetric       = Prefix + "demand_seats_average"
	DemandStdevMetric         = Prefix + "demand_seats_stdev"
)

// Label names of kube-apiserver's APF metrics.
const (
	LevelLabel  = "priority_level"
	SchemaLabel = "flow_schema"
	ReasonLabel = "reason"
)

// Rejection reasons of RejectedMetric.
const (
	ReasonQueueFull        = "queue-full"
	ReasonTimeOut          = "time-out"
	ReasonConcurrencyLimit = "concurrency-limit"
	ReasonCancelled        = "cancelled"
)

// Key is a (priority level, FlowSchema) pair, the labels of kube-apiserver's per-flow metrics.
type Key struct {
	PriorityLevel string
	FlowSchema    string
}

// LevelSeats are the seat gauges of one priority level.
type LevelSeats struct {
	// Nominal is the level's nominal seats; Lower the seats it keeps when lending all it may
	// (nominal minus lendable); Upper the most it may hold by borrowing; CurrentLimit what it
	// holds now (nominal minus lent plus borrowed).
	Nominal, Lower, Upper, CurrentLimit float64
}

// Flow is what the metrics say of one (level, FlowSchema) pair at one time: counters are
// totals since kube-apiserver started, gauges the current value.
type Flow struct {
	Dispatched float64
	// Rejected counts rejections by reason.
	Rejected map[string]float64

	InQueue, Executing, ExecutingSeats float64
	// Wait is the queue-wait histogram of every request, executed or not.
	Wait Histogram
}

// Histogram is a cumulative histogram: Counts[i] observations at most Bounds[i] (ascending),
// Count observations in all, Sum the sum of their values (of a timing histogram: the integral
// of the value over the time counted).
type Histogram struct {
	Bounds []float64
	Counts []float64
	Count  float64
	Sum    float64
}

// LevelDemand is the seat demand of one level (k8s.io/apiserver's seatDemandStats).
type LevelDemand struct {
	// Ratio is the DemandMetric histogram: time spent at each demand / nominal seats.
	Ratio Histogram
	// HighWatermark, Average and Stdev are the gauges of the last adjustment period, in seats.
	HighWatermark, Average, Stdev float64
}

// Snapshot is one read of kube-apiserver's APF metrics.
type Snapshot struct {
	Time   time.Time
	Levels map[string]LevelSeats
	Flows  map[Key]*Flow
	// Demand is each level's seat demand; a level absent from it had no demand series.
	Demand map[string]*LevelDemand
	// Replicas names the kube-apiserver replicas read, sorted (ReadReplicas); empty for one
	// read through a Service or a file.
	Replicas []string
}

// NewSnapshot extracts the APF metrics of families, read at t.
func NewSnapshot(f Families, t time.Time) *Snapshot {
	s := &Snapshot{Time: t, Levels: map[string]LevelSeats{}, Flows: map[Key]*Flow{}}
	nominal, lower := f.ByLabel(NominalSeatsMetric, LevelLabel), f.ByLabel(LowerSeatsMetric, LevelLabel)
	upper, current := f.ByLabel(UpperSeatsMetric, LevelLabel), f.ByLabel(CurrentLimitSeatsMetric, LevelLabel)
	for level, n := range nominal {
		s.Levels[level] = LevelSeats{Nominal: n, Lower: lower[level], Upper: upper[level], CurrentLimit: current[level]}
	}
	each(f[DispatchedMetric], func(k Key, m *dto.Metric) { s.flow(k).Dispatched += Value(m) })
	each(f[InQueueMetric], func(k Key, m *dto.Metric) { s.flow(k).InQueue += Value(m) })
	each(f[ExecutingMetric], func(k Key, m *dto.Metric) { s.flow(k).Executing += Value(m) })
	each(f[ExecutingSeatsMetric], func(k Key, m *dto.Metric) { s.flow(k).ExecutingSeats += Value(m) })
	each(f[RejectedMetric], func(k Key, m *dto.Metric) { s.flow(k).Rejected[Label(m, ReasonLabel)] += Value(m) })
	each(f[WaitMetric], func(k Key, m *dto.Metric) { s.flow(k).Wait.add(m.GetHistogram()) })
	s.Demand = demandOf(f)
	return s
}

// flow returns the Flow of k, made on first use.
func (s *Snapshot) flow(k Key) *Flow {
	fl := s.Flows[k]
	if fl == nil {
		fl = &Flow{Rejected: map[string]float64{}}
		s.Flows[k] = fl
	}
	return fl
}

func each(fam *dto.MetricFamily, fn func(Key, *dto.Metric)) {
	for _, m := range fam.GetMetric() {
		fn(Key{PriorityLevel: Label(m, LevelLabel), FlowSchema: Label(m, SchemaLabel)}, m)
	}
}

// add merges a Prometheus histogram into h (same bounds expected; unknown bounds are added).
func (h *Histogram) add(p *dto.Histogram) {
	if p == nil {
		return
	}
	h.Count += float64(p.GetSampleCount())
	h.Sum += p.GetSampleSum()
	for _, b := range p.GetBucket() {
		h.addBucket(b.GetUpperBound(), float64(b.GetCumulativeCount()))
	}
}

func (h *Histogram) addBucket(bound, count float64) {
	i := sort.SearchFloat64s(h.Bounds, bound)
	if i < len(h.Bounds) && h.Bounds[i] == bound {
		h.Counts[i] += count
		return
	}
	h.Bounds = append(h.Bounds[:i], append([]float64{bound}, h.Bounds[i:]...)...)
	h.Counts = append(h.Counts[:i], append([]float64{count}, h.Counts[i:]...)...)
}

// Sub is h minus an earlier prev of the same series (a counter reset keeps h as is).
func (h Histogram) Sub(prev Histogram) Histogram {
	if h.Count < prev.Count {
		return h
	}
	out := Histogram{Bounds: append([]float64(nil), h.Bounds...), Counts: make([]float64, len(h.Counts)), Count: h.Count - prev.Count, Sum: max(h.Sum-prev.Sum, 0)}
	for i, b := range h.Bounds {
		out.Counts[i] = h.Counts[i]
		if j := sort.SearchFloat64s(prev.Bounds, b); j < len(prev.Bounds) && prev.Bounds[j] == b {
			out.Counts[i] = max(h.Counts[i]-prev.Counts[j], 0)
		}
	}
	return out
}

// Quantile estimates the q-quantile (0 < q < 1) as Prometheus' histogram_quantile does:
// linear interpolation inside the bucket that holds it. ok is false with no observations; a
// quantile above the highest finite bound is that bound.
func (h Histogram) Quantile(q float64) (v float64, ok bool) {
	if h.Count <= 0 || len(h.Bounds) == 0 {
		return 0, false
	}
	rank := q * h.Count
	lowerBound, lowerCount := 0.0, 0.0
	for i, b := range h.Bounds {
		if h.Counts[i] >= rank {
			if math.IsInf(b, 1) {
				return lowerBound, true
			}
			inBucket := h.Counts[i] - lowerCount
			if inBucket <= 0 {
				return b, true
			}
			return lowerBound + (b-lowerBound)*(rank-lowerCount)/inBucket, true
		}
		lowerBound, lowerCount = b, h.Counts[i]
	}
	return lowerBound, true
}

// counterDelta is cur minus prev for a counter; a reset (cur < prev) counts cur.
func counterDelta(cur, prev float64) float64 {
	if cur < prev {
		return cur
	}
	return cur - prev
}

// FlowDelta is what happened to one (level, FlowSchema) pair between two snapshots: counter
// increases, the gauges of the later one.
type FlowDelta struct {
	Dispatched float64
	Rejected   map[string]float64
	// InQueue, Executing and ExecutingSeats are the later snapshot's gauges.
	InQueue, Executing, ExecutingSeats float64
	Wait                               Histogram
}

// RejectedTotal is the sum of the rejections of every reason.
func (d FlowDelta) RejectedTotal() float64 {
	var sum float64
	for _, v := range d.Rejected {
		sum += v
	}
	return sum
}

// Since is what happened from prev (nil: kube-apiserver's start) to s, by (level, FlowSchema).
func (s *Snapshot) Since(prev *Snapshot) map[Key]FlowDelta {
	out := make(map[Key]FlowDelta, len(s.Flows))
	for k, cur := range s.Flows {
		old := &Flow{Rejected: map[string]float64{}}
		if prev != nil && prev.Flows[k] != nil {
			old = prev.Flows[k]
		}
		d := FlowDelta{Dispatched: counterDelta(cur.Dispatched, old.Dispatched), Rejected: map[string]float64{},
			InQueue: cur.InQueue, Executing: cur.Executing, ExecutingSeats: cur.ExecutingSeats, Wait: cur.Wait.Sub(old.Wait)}
		for reason, v := range cur.Rejected {
			d.Rejected[reason] = counterDelta(v, old.Rejected[reason])
		}
		out[k] = d
	}
	return out
}
