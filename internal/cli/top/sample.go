package top

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// maxFlows bounds the flows of a report.
const maxFlows = 100

// readSnapshot reads the APF metrics of every source (one per kube-apiserver replica read) and
// sums them.
func readSnapshot(ctx context.Context, srcs []source) (*apfmetrics.Snapshot, error) {
	snaps := make([]*apfmetrics.Snapshot, 0, len(srcs))
	for _, src := range srcs {
		s, err := readOne(ctx, src)
		if err != nil {
			if len(srcs) > 1 {
				return nil, fmt.Errorf("%s: %w", src.server(), err)
			}
			return nil, err
		}
		snaps = append(snaps, s)
	}
	return apfmetrics.Merge(snaps...), nil
}

// readOne reads one kube-apiserver's APF metrics.
func readOne(ctx context.Context, src source) (*apfmetrics.Snapshot, error) {
	return apfmetrics.Read(ctx, src.get)
}

// collect builds the report of the window prev..cur, adding the owners, the replicas and the
// queued flows (from every source); what cannot be read becomes a warning.
func collect(ctx context.Context, srcs []source, prev, cur *apfmetrics.Snapshot) *Report {
	first := srcs[0]
	r := &Report{Server: first.server(), Levels: []Level{}, FlowSchemas: []FlowSchema{}, Flows: []Flow{}}
	owners, err := first.owners(ctx)
	if err != nil {
		r.Warnings = append(r.Warnings, "cannot map native objects to the operator's: "+err.Error())
	}
	build(r, prev, cur, owners)
	var rows []apfmetrics.Row
	for _, src := range srcs {
		raw, err := src.get(ctx, apfmetrics.DumpRequestsPath+"?includeRequestDetails=1")
		if err != nil {
			r.FlowsMissing = flowsMissing(err)
			r.Warnings = append(r.Warnings, "no flows from "+src.server()+": "+r.FlowsMissing)
			continue
		}
		rows = append(rows, apfmetrics.ParseDump(raw)...)
	}
	r.Flows = flowsOf(rows, owners)
	if len(r.Flows) > maxFlows {
		r.Flows = r.Flows[:maxFlows]
	}
	n, err := first.replicas(ctx)
	r.Replicas = n
	r.ReplicaNote = replicaNote(srcs, n, err)
	if len(srcs) > 1 {
		for _, src := range srcs {
			r.ReadFrom = append(r.ReadFrom, src.server())
		}
	}
	return r
}

// replicaNote says which replicas the view covers: "" when it covers the only one.
func replicaNote(srcs []source, announced int, err error) string {
	switch {
	case len(srcs) > 1 && err == nil && announced > len(srcs):
		return fmt.Sprintf("summed over the %d kube-apiserver replicas read (readFrom); the cluster announces %d: "+
			"the others are not counted", len(srcs), announced)
	case len(srcs) > 1:
		return fmt.Sprintf("summed over the %d kube-apiserver replicas read (readFrom)", len(srcs))
	case err != nil:
		return "kube-apiserver replicas unknown (" + err.Error() + "); this view is of the one that answered"
	case announced > 1:
		return fmt.Sprintf("%d kube-apiserver replicas, each with its own flow control and counters; "+
			"this view is of the one that answered (--replica-servers reads each and sums them)", announced)
	}
	return ""
}

// flowsMissing says which columns a failed read of the requests' dump leaves out, and why.
func flowsMissing(err error) string {
	if apierrors.IsForbidden(err) {
		return "the FLOWS table (DISTINGUISHER, USERS, QUEUED, EXEC) is not shown: reading " + apfmetrics.DumpRequestsPath +
			" is forbidden, which the narrow role apf-top-metrics leaves out on purpose (it lists each in-flight " +
			"request's user and path; docs/top.md, Permissions); the levels and FlowSchemas, from /metrics, are complete"
	}
	return "the FLOWS table is not shown: " + err.Error()
}
