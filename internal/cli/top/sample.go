package top

import (
	"context"
	"fmt"
	"time"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// maxFlows bounds the flows of a report.
const maxFlows = 100

// readSnapshot reads kube-apiserver's APF metrics once. kube-apiserver reads its counters
// while it serves the request: the snapshot's time is the middle of the request.
func readSnapshot(ctx context.Context, src source) (*apfmetrics.Snapshot, error) {
	sent := time.Now()
	raw, err := src.get(ctx, "/metrics")
	if err != nil {
		return nil, err
	}
	t := sent.Add(time.Since(sent) / 2)
	families, err := apfmetrics.Parse(raw, apfmetrics.Prefix)
	if err != nil {
		return nil, fmt.Errorf("parsing kube-apiserver's /metrics: %w", err)
	}
	if len(families[apfmetrics.NominalSeatsMetric].GetMetric()) == 0 {
		return nil, fmt.Errorf("kube-apiserver's /metrics has no %s: is API Priority and Fairness enabled?", apfmetrics.NominalSeatsMetric)
	}
	return apfmetrics.NewSnapshot(families, t), nil
}

// collect builds the report of the window prev..cur, adding the owners, the replicas and the
// queued flows; what cannot be read becomes a warning.
func collect(ctx context.Context, src source, prev, cur *apfmetrics.Snapshot) *Report {
	r := &Report{Server: src.server(), Levels: []Level{}, FlowSchemas: []FlowSchema{}, Flows: []Flow{}}
	owners, err := src.owners(ctx)
	if err != nil {
		r.Warnings = append(r.Warnings, "cannot map native objects to the operator's: "+err.Error())
	}
	build(r, prev, cur, owners)
	if raw, err := src.get(ctx, apfmetrics.DumpRequestsPath+"?includeRequestDetails=1"); err != nil {
		r.Warnings = append(r.Warnings, "no flows: "+err.Error())
	} else {
		r.Flows = flowsOf(apfmetrics.ParseDump(raw), owners)
		if len(r.Flows) > maxFlows {
			r.Flows = r.Flows[:maxFlows]
		}
	}
	n, err := src.replicas(ctx)
	r.Replicas = n
	switch {
	case err != nil:
		r.ReplicaNote = "kube-apiserver replicas unknown (" + err.Error() + "); this view is of the one that answered"
	case n > 1:
		r.ReplicaNote = fmt.Sprintf("%d kube-apiserver replicas, each with its own flow control and counters; "+
			"this view is of the one that answered (run top with --server <replica address> for each)", n)
	}
	return r
}
