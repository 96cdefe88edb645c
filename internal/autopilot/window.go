package autopilot

import "github.com/apf-operator/apf-operator/internal/apfmetrics"

// WindowFrom computes the window between two reads of kube-apiserver's metrics (replicas
// merged with apfmetrics.Merge) for the named levels, at cfg.Quantile. The window is
// Incomplete when prev is nil, the interval is shorter than cfg.MinWindow, a level's demand
// series is missing from either read, or a counter went backwards (a restart).
func WindowFrom(cfg Config, prev, cur *apfmetrics.Snapshot, levels []string) Window {
	panic("TODO(core)")
}
