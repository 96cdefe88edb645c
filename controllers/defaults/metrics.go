package defaults

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/apf-operator/apf-operator/controllers/internal/reconcileutil"
)

// Metrics counts what the defaults reconciler did, by kind.
type Metrics struct {
	created   *prometheus.CounterVec
	repaired  *prometheus.CounterVec
	conflicts *prometheus.CounterVec
	takenOver *prometheus.CounterVec
}

// NewMetrics creates the defaults metrics (listed in the package doc) and registers them into
// reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
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
			Help: "Creations, repairs or replacements of default objects that lost a race with another writer, by kind.",
		}, []string{"kind"}),
		takenOver: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apf_operator_defaults_taken_over_total",
			Help: "Default objects handed over to the user because an applied manifest (server-side or kubectl apply) set their spec, by kind.",
		}, []string{"kind"}),
	}
	if err := reconcileutil.RegisterAll(reg, m.created, m.repaired, m.conflicts, m.takenOver); err != nil {
		return nil, err
	}
	return m, nil
}
