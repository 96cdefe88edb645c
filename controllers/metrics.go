package controllers

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/apf-operator/apf-operator/controllers/internal/reconcileutil"
	"github.com/apf-operator/apf-operator/internal/native"
)

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
			Help: "Writes of native flowcontrol objects, by native kind, operation (create, apply, delete) and result.",
		}, []string{"kind", "operation", "result"}),
	}
	if err := reconcileutil.RegisterAll(reg, m.objects, m.writes); err != nil {
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
