package eventratelimit

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// Results of the metrics' result label.
const (
	resultAccepted = "accepted"
	resultRejected = "rejected"
)

// Metrics are the engine's Prometheus metrics. Every series is bound when the metrics are made,
// so that the admission path only adds to counters.
type Metrics struct {
	// decisions[type index][0 accepted, 1 rejected]
	decisions [4][2]prometheus.Counter
	events    [2]prometheus.Counter
	skipped   map[SkipReason]prometheus.Counter
}

// NewMetrics registers the metrics with reg (the manager passes controller-runtime's registry,
// tests a fresh one).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	decisions := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apf_operator_event_rate_limit_decisions_total",
		Help: "Verdicts of EventRateLimit buckets on event creations, by limit type (Server, Namespace, User, SourceAndObject) and result (accepted: the bucket had a token).",
	}, []string{"limit_type", "result"})
	events := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apf_operator_event_rate_limit_events_total",
		Help: "Event creations the EventRateLimit webhook admitted (accepted) or rejected with HTTP 429 (rejected).",
	}, []string{"result"})
	skipped := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apf_operator_event_rate_limit_skipped_total",
		Help: "Admission requests on the events webhook admitted without charging any bucket, by reason (NotEventCreate, DryRun, NoNamespace, NoUser).",
	}, []string{"reason"})
	for _, c := range []prometheus.Collector{decisions, events, skipped} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	m := &Metrics{}
	for i, t := range v1alpha1.EventRateLimitTypes {
		m.decisions[i][0] = decisions.WithLabelValues(string(t), resultAccepted)
		m.decisions[i][1] = decisions.WithLabelValues(string(t), resultRejected)
	}
	m.events[0] = events.WithLabelValues(resultAccepted)
	m.events[1] = events.WithLabelValues(resultRejected)
	m.skipped = make(map[SkipReason]prometheus.Counter, len(SkipReasons))
	for _, r := range SkipReasons {
		m.skipped[r] = skipped.WithLabelValues(string(r))
	}
	return m, nil
}

// skip counts a request admitted without charge; the map is read-only after NewMetrics.
func (m *Metrics) skip(reason SkipReason) {
	if c, ok := m.skipped[reason]; ok {
		c.Inc()
	}
}

// typeIndex is the index of t in v1alpha1.EventRateLimitTypes.
func typeIndex(t v1alpha1.EventRateLimitType) int {
	for i, known := range v1alpha1.EventRateLimitTypes {
		if t == known {
			return i
		}
	}
	return 0 // validated specs only reach the engine
}

func resultIndex(ok bool) int {
	if ok {
		return 0
	}
	return 1
}
