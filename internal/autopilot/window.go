package autopilot

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// demandTopBound is the highest finite bucket bound of kube-apiserver's demand histogram
// (demand 6 times the level's seats); a quantile above it is only known to be above it.
const demandTopBound = 6

// WindowFrom computes the window between two reads of kube-apiserver's metrics (replicas
// merged with apfmetrics.Merge) for the named levels, at cfg.Quantile. The window is
// Incomplete when prev is nil, the interval is shorter than cfg.MinWindow, the two reads are
// of different replicas, a level's demand series is missing from either read, or a counter
// went backwards (a restart).
//
// With prev nil the figures are those since kube-apiserver started (one read: what
// `apf-operator recommend` can show from a single snapshot), still marked Incomplete.
func WindowFrom(cfg Config, prev, cur *apfmetrics.Snapshot, levels []string) Window {
	w := Window{Levels: map[string]Demand{}}
	if cur == nil {
		w.Incomplete = "no metrics read"
		return w
	}
	w.End = cur.Time
	var why []string
	first := prev == nil
	if first {
		why = append(why, "one read only: figures since kube-apiserver started")
		prev = &apfmetrics.Snapshot{Time: cur.Time}
	} else {
		w.Start = prev.Time
		if d := cur.Time.Sub(prev.Time); d < cfg.MinWindow {
			why = append(why, fmt.Sprintf("window of %s shorter than %s", d.Round(1e6), cfg.MinWindow))
		}
		// Counters of two sets of replicas are not one series: a replica younger or older
		// than the one it replaced reads as a counter reset or as a burst of demand.
		if same, how := apfmetrics.SameReplicas(prev, cur); !same {
			w.Incomplete = how
			return w
		}
	}
	deltas := cur.Since(prev)
	sorted := append([]string(nil), levels...)
	sort.Strings(sorted)
	for _, name := range sorted {
		d, problem := levelDemand(cfg, first, prev, cur, deltas, name)
		if problem != "" {
			why = append(why, name+": "+problem)
			continue
		}
		w.Levels[name] = d
	}
	w.Incomplete = strings.Join(why, "; ")
	return w
}

// levelDemand is one level's demand over the window, or why it cannot be measured.
// first says prev is an empty stand-in for kube-apiserver's start.
func levelDemand(cfg Config, first bool, prev, cur *apfmetrics.Snapshot, deltas map[apfmetrics.Key]apfmetrics.FlowDelta, name string) (Demand, string) {
	seats, ok := cur.Levels[name]
	if !ok {
		return Demand{}, "no nominal seats series"
	}
	curD := cur.Demand[name]
	if curD == nil {
		return Demand{}, "no demand series in the later read"
	}
	prevRatio := apfmetrics.Histogram{}
	if !first {
		pd := prev.Demand[name]
		if pd == nil {
			return Demand{}, "no demand series in the earlier read"
		}
		prevRatio = pd.Ratio
	}
	if !wellFormed(curD.Ratio) || !wellFormed(prevRatio) {
		return Demand{}, "malformed demand histogram"
	}
	if curD.Ratio.Count < prevRatio.Count || countersWentBack(prev, cur, name) {
		return Demand{}, "a counter went backwards (kube-apiserver restarted)"
	}
	ratio := curD.Ratio.Sub(prevRatio)
	if ratio.Count <= 0 {
		return Demand{}, "no time recorded in the demand series"
	}
	// kube-apiserver divides the seat demand by the level's current limit (its nominal seats
	// plus borrowed minus lent, reset every 10 s), not by its nominal seats: that limit is the
	// denominator that turns the ratio back into seats.
	denominator := seats.CurrentLimit
	if denominator <= 0 {
		denominator = seats.Nominal
	}
	d := Demand{NominalSeats: seats.Nominal}
	d.Seats = ratioQuantile(ratio, cfg.Quantile, denominator, curD.HighWatermark)
	d.Peak = math.Max(d.Seats, math.Max(curD.HighWatermark, highestBucketFloor(ratio)*denominator))
	var wait apfmetrics.Histogram
	for k, fd := range deltas {
		if k.PriorityLevel == name {
			d.Dispatched += fd.Dispatched
			d.Rejected += fd.RejectedTotal()
			wait = wait.Plus(fd.Wait)
		}
	}
	d.WaitP99, d.WaitKnown = wait.Quantile(0.99)
	return d, ""
}

// ratioQuantile is the q-quantile of the ratio histogram in seats; above the top bucket it is
// the larger of 6 x denominator and the high watermark gauge.
//
// Interpolating inside a bucket puts an idle level's p95 at 0.95 x 0.2 (the first bucket holds
// ratio 0), a fifth of its seats. The mean bounds it: a quantity that is never negative is at
// least v for at most mean/v of the time (Markov's inequality), so its q-quantile is at most
// mean/(1-q); an idle level's mean is 0, and so is its demand.
func ratioQuantile(h apfmetrics.Histogram, q, denominator, highWatermark float64) float64 {
	if belowTop := countAtMost(h, demandTopBound); belowTop < q*h.Count {
		return math.Max(demandTopBound*denominator, highWatermark)
	}
	v, _ := h.Quantile(q)
	if mean, ok := meanOf(h); ok && q < 1 {
		v = math.Min(v, mean/(1-q))
	}
	return v * denominator
}

// meanOf is the histogram's mean, when its Sum is one: a sum below the least the buckets allow
// (each bucket's count at its lower bound) was not read, and is ignored.
func meanOf(h apfmetrics.Histogram) (float64, bool) {
	if h.Count <= 0 {
		return 0, false
	}
	least, lower, below := 0.0, 0.0, 0.0
	for i, b := range h.Bounds {
		least += lower * (h.Counts[i] - below)
		lower, below = b, h.Counts[i]
	}
	if h.Sum < least*(1-1e-9) {
		return 0, false
	}
	return h.Sum / h.Count, true
}

// wellFormed reports whether h has a count per bound and finite, non-negative counts.
func wellFormed(h apfmetrics.Histogram) bool {
	if len(h.Bounds) != len(h.Counts) || !(h.Count >= 0) || math.IsInf(h.Count, 0) {
		return false
	}
	for _, c := range h.Counts {
		if !(c >= 0) || math.IsInf(c, 0) {
			return false
		}
	}
	return true
}

// countAtMost is the histogram's cumulative count at the bound b (0 when b is not a bound).
func countAtMost(h apfmetrics.Histogram, b float64) float64 {
	for i, bound := range h.Bounds {
		if bound == b {
			return h.Counts[i]
		}
	}
	return 0
}

// highestBucketFloor is the lower bound of the highest bucket with observations: the demand
// ratio reached at least that.
func highestBucketFloor(h apfmetrics.Histogram) float64 {
	lower, prevCount := 0.0, 0.0
	floor := 0.0
	for i, b := range h.Bounds {
		if h.Counts[i] > prevCount {
			floor = lower
		}
		lower, prevCount = b, h.Counts[i]
	}
	return floor
}

// countersWentBack reports whether a counter of the level decreased between the reads.
func countersWentBack(prev, cur *apfmetrics.Snapshot, name string) bool {
	for k, p := range prev.Flows {
		if k.PriorityLevel != name {
			continue
		}
		c := cur.Flows[k]
		if c == nil {
			return true
		}
		if c.Dispatched < p.Dispatched || c.Wait.Count < p.Wait.Count {
			return true
		}
		for reason, v := range p.Rejected {
			if c.Rejected[reason] < v {
				return true
			}
		}
	}
	return false
}
