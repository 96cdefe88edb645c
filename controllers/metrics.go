package controllers

import (
	"github.com/prometheus/client_golang/prometheus"
)

// defaultsMetrics counts what the defaults reconciler did, by kind.
type defaultsMetrics struct {
	created   *prometheus.CounterVec
	repaired  *prometheus.CounterVec
	conflicts *prometheus.CounterVec
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
			Help: "Creations or repairs of default objects that lost a race with another writer, by kind.",
		}, []string{"kind"}),
	}
	for _, c := range []prometheus.Collector{m.created, m.repaired, m.conflicts} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
