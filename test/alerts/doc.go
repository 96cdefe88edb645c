// Package alerts evaluates the chart's Prometheus alert expressions
// (charts/apf-operator/files/prometheus-rules.yaml) with Prometheus's own PromQL engine against
// series shaped like the operator's metrics, so that each alert is shown to fire on the
// situation it describes and to stay silent otherwise. It is a module of its own so that the
// Prometheus server's dependencies stay out of the operator's go.mod.
package alerts
