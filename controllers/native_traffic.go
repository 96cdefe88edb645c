package controllers

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// The status summary of rejections (status.observed): counted over trafficWindow, recomputed
// at most every summaryReads reads of /metrics (the seat reader's period), so that a tenant
// rejected without pause costs each object at most one status write per summaryReads periods.
// trafficMinInterval is that interval at DefaultNativeSeatsPeriod, and the interval of a
// rejectionWindow that was given none.
const (
	trafficWindow      = 5 * time.Minute
	summaryReads       = 2
	trafficMinInterval = summaryReads * DefaultNativeSeatsPeriod
)

// summaryInterval is the least time between two summaries when /metrics is read every period.
func summaryInterval(period time.Duration) time.Duration { return summaryReads * period }

// observedTraffic is the rejections kube-apiserver counted over the last trafficWindow (or
// since the first read, for a younger leader), by native level and by native FlowSchema.
type observedTraffic struct {
	at      time.Time
	levels  map[string]int64
	schemas map[string]int64
}

func (o *observedTraffic) sameCounts(p *observedTraffic) bool {
	if o == nil || p == nil {
		return o == p
	}
	return maps.Equal(o.levels, p.levels) && maps.Equal(o.schemas, p.schemas)
}

// rejectionSample is one read of kube-apiserver's rejection counters.
type rejectionSample struct {
	at      time.Time
	levels  map[string]float64
	schemas map[string]float64
}

// rejectionWindow keeps the samples of the rejection counters that the window needs.
type rejectionWindow struct {
	// minInterval is the least time between two samples (summaryInterval); zero means
	// trafficMinInterval.
	minInterval time.Duration
	// summaries counts the summaries computed (nil: not counted), so that a test can wait for
	// a recomputation instead of sleeping.
	summaries prometheus.Counter
	mu        sync.Mutex
	samples   []rejectionSample // oldest first
	current   atomic.Pointer[observedTraffic]
}

// newSummariesCounter creates apf_operator_rejection_summaries_total and registers it into reg.
func newSummariesCounter(reg prometheus.Registerer) (prometheus.Counter, error) {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "apf_operator_rejection_summaries_total",
		Help: "Recomputations of the status summary of kube-apiserver's rejections (status.observed) by the leader, at most one every two periods of its reads of kube-apiserver's /metrics.",
	})
	return c, reg.Register(c)
}

// get returns the last counts; nil before two reads minInterval apart.
func (w *rejectionWindow) get() *observedTraffic {
	if w == nil {
		return nil
	}
	return w.current.Load()
}

// update adds the rejection counters of families, read at now, at most once per
// minInterval, and reports whether the counts changed.
func (w *rejectionWindow) update(families apfmetrics.Families, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := len(w.samples); n > 0 && now.Sub(w.samples[n-1].at) < cmp.Or(w.minInterval, trafficMinInterval) {
		return false
	}
	w.samples = append(w.samples, rejectionSample{at: now,
		levels:  families.ByLabel(apfmetrics.RejectedMetric, apfmetrics.LevelLabel),
		schemas: families.ByLabel(apfmetrics.RejectedMetric, apfmetrics.SchemaLabel)})
	// The baseline is the newest sample at least trafficWindow old, else the oldest.
	base := 0
	for i, s := range w.samples[:len(w.samples)-1] {
		if now.Sub(s.at) >= trafficWindow {
			base = i
		}
	}
	w.samples = slices.Delete(w.samples, 0, base)
	if len(w.samples) < 2 {
		return false
	}
	first, last := w.samples[0], w.samples[len(w.samples)-1]
	obs := &observedTraffic{at: now, levels: increases(first.levels, last.levels), schemas: increases(first.schemas, last.schemas)}
	if w.summaries != nil {
		w.summaries.Inc()
	}
	return !obs.sameCounts(w.current.Swap(obs))
}

// increases is, per key, how much a counter grew from prev to cur (a reset counts cur).
func increases(prev, cur map[string]float64) map[string]int64 {
	out := make(map[string]int64, len(cur))
	for k, v := range cur {
		d := v - prev[k]
		if d < 0 {
			d = v
		}
		if n := int64(d + 0.5); n > 0 {
			out[k] = n
		}
	}
	return out
}

// applyTraffic sets the rejection counts of every projected object's view; s is not published
// yet. An object without a count keeps none (nil), so its stored summary stays as it is.
func (s *snapshot) applyTraffic(obs *observedTraffic) {
	if obs == nil || s.plan == nil {
		return
	}
	for name, v := range s.rps {
		if res := s.plan.RequestPriorities[name]; res.Projected {
			n := obs.levels[res.NativeName]
			v.rejected, v.observedAt = &n, obs.at
			s.rps[name] = v
		}
	}
	for name, v := range s.fss {
		if res := s.plan.FlowSchemaResults[name]; res.Projected {
			n := obs.schemas[res.NativeName]
			v.rejected, v.observedAt = &n, obs.at
			s.fss[name] = v
		}
	}
}

// observedStatus is the status.observed to write given the stored one and the view's count:
// the stored one while the count is unknown or the same; none while nothing was ever
// rejected; else a new summary.
func observedStatus(stored *flowv1.ObservedTraffic, v objectView) *flowv1.ObservedTraffic {
	switch {
	case v.rejected == nil:
		return stored
	case stored == nil && *v.rejected == 0:
		return nil
	case stored != nil && stored.RejectedLast5m == *v.rejected:
		return stored
	}
	return &flowv1.ObservedTraffic{RejectedLast5m: *v.rejected, WindowEnd: metav1.NewTime(v.observedAt)}
}
