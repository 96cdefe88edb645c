package controllers

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/apf-operator/apf-operator/internal/autopilot"
)

// Results of apf_operator_autopilot_steps_total.
const (
	autopilotApplied    = "applied"
	autopilotRolledBack = "rolled_back"
	autopilotHeld       = "held"
	autopilotIncomplete = "incomplete"
)

// autopilotMetrics counts the autopilot's steps by result.
type autopilotMetrics struct {
	steps *prometheus.CounterVec
}

// newAutopilotMetrics creates the autopilot metrics and registers them into reg.
func newAutopilotMetrics(reg prometheus.Registerer) (*autopilotMetrics, error) {
	m := &autopilotMetrics{steps: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apf_operator_autopilot_steps_total",
		Help: "Steps of the autopilot's closed loop, by result: applied (the pool's shares changed), rolled_back (a rejection spike restored the last good shares), held (nothing to change, or waiting for confirmation or a freeze), incomplete (the window's metrics could not drive a change).",
	}, []string{"result"})}
	for _, r := range []string{autopilotApplied, autopilotRolledBack, autopilotHeld, autopilotIncomplete} {
		m.steps.WithLabelValues(r)
	}
	return m, reg.Register(m.steps)
}

// count records one step.
func (m *autopilotMetrics) count(w autopilot.Window, step autopilot.Step) {
	result := autopilotHeld
	switch {
	case step.RolledBack:
		result = autopilotRolledBack
	case step.Changed:
		result = autopilotApplied
	case w.Incomplete != "":
		result = autopilotIncomplete
	}
	m.steps.WithLabelValues(result).Inc()
}
