package apfmetrics

import (
	"context"
	"fmt"
	"time"
)

// MetricsPath is kube-apiserver's Prometheus endpoint.
const MetricsPath = "/metrics"

// Getter reads a non-resource path of one kube-apiserver (a REST client's GET).
type Getter func(ctx context.Context, path string) ([]byte, error)

// Read reads one kube-apiserver's APF metrics through get. kube-apiserver reads its counters
// while it serves the request: the snapshot's time is the middle of the request.
func Read(ctx context.Context, get Getter) (*Snapshot, error) {
	sent := time.Now()
	raw, err := get(ctx, MetricsPath)
	if err != nil {
		return nil, err
	}
	return FromText(raw, sent.Add(time.Since(sent)/2))
}

// FromText is the snapshot of a /metrics text read at t (a saved `kubectl get --raw /metrics`
// has no time of its own: the caller gives one). It is an error when the text has no APF
// seats (API Priority and Fairness disabled, or not kube-apiserver's metrics).
func FromText(raw []byte, t time.Time) (*Snapshot, error) {
	families, err := Parse(raw, Prefix)
	if err != nil {
		return nil, fmt.Errorf("parsing kube-apiserver's /metrics: %w", err)
	}
	if len(families[NominalSeatsMetric].GetMetric()) == 0 {
		return nil, fmt.Errorf("kube-apiserver's /metrics has no %s: is API Priority and Fairness enabled?", NominalSeatsMetric)
	}
	return NewSnapshot(families, t), nil
}
