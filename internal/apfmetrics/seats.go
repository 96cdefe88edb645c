package apfmetrics

import (
	"fmt"
	"math"
)

// ExemptLevel is the name of kube-apiserver's mandatory exempt priority level.
const ExemptLevel = "exempt"

// SeatsMetrics are the families Seats reads: give them to Parse.
var SeatsMetrics = []string{NominalSeatsMetric, UpperSeatsMetric, CurrentLimitSeatsMetric}

// Seats is what one kube-apiserver's /metrics say of its seats. This package is the one place
// that reads them: the operator's native seats and the CLI's views of a cluster both call it.
type Seats struct {
	// Nominal and CurrentLimit are each level's nominal and current concurrency limits in
	// seats, by level name.
	Nominal, CurrentLimit map[string]int64
	// ServerLimit is the server's concurrency limit in seats (--max-requests-inflight plus
	// --max-mutating-requests-inflight); 0 when unknown.
	ServerLimit int64
}

// ParseSeats reads the seats of a /metrics text (Prometheus text format); only the lines of
// SeatsMetrics are parsed.
func ParseSeats(raw []byte) (*Seats, error) {
	families, err := Parse(raw, SeatsMetrics...)
	if err != nil {
		return nil, fmt.Errorf("parsing kube-apiserver's /metrics: %w", err)
	}
	return SeatsOf(families)
}

// SeatsOf reads the seats of parsed families. It is an error when they have no nominal seats
// (API Priority and Fairness disabled, or not kube-apiserver's metrics).
//
// The server's limit is read, not searched for: kube-apiserver sets a level's upper limit to
// its nominal seats plus the server's limit when the level has no borrowing limit, as the exempt
// level never has (k8s.io/apiserver pkg/util/flowcontrol/apf_controller.go,
// finishQueueSetReconfigsLocked). The nominal seats alone cannot tell it: they are rounded up,
// so several limits (598 to 600 with kube-apiserver's suggested levels) give the same seats.
func SeatsOf(f Families) (*Seats, error) {
	nominal := f.ByLabel(NominalSeatsMetric, LevelLabel)
	if len(nominal) == 0 {
		return nil, fmt.Errorf("no %s in kube-apiserver's metrics (API Priority and Fairness off?)", NominalSeatsMetric)
	}
	out := &Seats{Nominal: whole(nominal), CurrentLimit: whole(f.ByLabel(CurrentLimitSeatsMetric, LevelLabel))}
	if upper, ok := f.ByLabel(UpperSeatsMetric, LevelLabel)[ExemptLevel]; ok {
		out.ServerLimit = max(int64(math.Round(upper-nominal[ExemptLevel])), 0)
	}
	return out, nil
}

// whole rounds gauges of seats, which kube-apiserver sets from integers.
func whole(in map[string]float64) map[string]int64 {
	out := make(map[string]int64, len(in))
	for k, v := range in {
		out[k] = int64(math.Round(v))
	}
	return out
}
