package controllers

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/apf-operator/apf-operator/internal/native"
)

// defaultsMetrics counts what the defaults reconciler did, by kind.
type defaultsMetrics struct {
	created   *prometheus.CounterVec
	repaired  *prometheus.CounterVec
	conflicts *prometheus.CounterVec
	takenOver *prometheus.CounterVec
}

// newDefaultsMetrics creates the defaults metrics and registers them into reg.
func newDefaultsMetrics(reg prometheus.Registerer) (*defaultsMetrics, error) {
	m := &defaultsMetrics{
		created: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apf_operator_defaults_created_total",
			Help: "Default RequestPriority and FlowSchema objects the operator created, by kind.",
		}, []string{"kind"}),
		repaired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apf_operator_defaults_repaired_total",
			Help: "Default objects whose drifted spec the operator restored, by kind.",
		}, []string{"kind"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apf_operator_defaults_conflicts_total",
			Help: "Creations, repairs or retirements of default objects that lost a race with another writer, by kind.",
		}, []string{"kind"}),
		takenOver: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apf_operator_defaults_taken_over_total",
			Help: "Default objects handed over to the user because an applied manifest (server-side or kubectl apply) set their spec, by kind.",
		}, []string{"kind"}),
	}
	if err := registerAll(reg, m.created, m.repaired, m.conflicts, m.takenOver); err != nil {
		return nil, err
	}
	return m, nil
}

// registerAll registers every collector into reg, stopping at the first error.
func registerAll(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// projectionMetrics shows the projection onto kube-apiserver's native objects.
type projectionMetrics struct {
	objects *prometheus.GaugeVec
	writes  *prometheus.CounterVec
}

// newProjectionMetrics creates the projection metrics and registers them into reg.
func newProjectionMetrics(reg prometheus.Registerer) (*projectionMetrics, error) {
	m := &projectionMetrics{
		objects: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apf_operator_projection_objects",
			Help: "RequestPriority and FlowSchema objects by kind and projection state (projected, or the reason they are not).",
		}, []string{"kind", "state"}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apf_operator_projection_writes_total",
			Help: "Writes of native flowcontrol objects, by native kind, operation (apply, delete) and result.",
		}, []string{"kind", "operation", "result"}),
	}
	if err := registerAll(reg, m.objects, m.writes); err != nil {
		return nil, err
	}
	return m, nil
}

// record sets the objects gauge from a plan.
func (m *projectionMetrics) record(plan *native.Plan) {
	m.objects.Reset()
	for kind, results := range map[string]map[string]native.Result{
		native.KindRequestPriority: plan.RequestPriorities, native.KindFlowSchema: plan.FlowSchemaResults,
	} {
		for _, r := range results {
			state := "projected"
			if !r.Projected {
				state = r.Reason
			}
			m.objects.WithLabelValues(kind, state).Inc()
		}
	}
}

// newSnapshotDuration creates the histogram of the effective configuration's computations
// (its count is how many were made) and registers it into reg.
func newSnapshotDuration(reg prometheus.Registerer) (prometheus.Histogram, error) {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "apf_operator_snapshot_duration_seconds",
		Help:    "Time to compute the effective configuration and its projection from the cache, once per burst of changes.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 8),
	})
	return h, reg.Register(h)
}
