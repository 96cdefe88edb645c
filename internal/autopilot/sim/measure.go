package sim

import (
	"math"
	"slices"
	"time"

	"github.com/apf-operator/apf-operator/internal/autopilot"
)

// levelAcc accumulates one level's measurements over a window.
type levelAcc struct {
	// demand[s] is how long exactly s seats were demanded (executing plus queued requests;
	// every simulated request is one seat wide).
	demand     []time.Duration
	peak       int
	dispatched int
	rejected   int
	waits      []time.Duration
}

// window accumulates every level's measurements from start.
type window struct {
	start  time.Duration
	levels []levelAcc
}

func newWindow(start time.Duration, levels int) *window {
	return &window{start: start, levels: make([]levelAcc, levels)}
}

// integrate adds d of the current seat demand of each level.
func (w *window) integrate(d time.Duration, seats []int) {
	if d <= 0 {
		return
	}
	for i, s := range seats {
		a := &w.levels[i]
		for len(a.demand) <= s {
			a.demand = append(a.demand, 0)
		}
		a.demand[s] += d
	}
}

// observePeak raises each level's high watermark to its current seat demand.
func (w *window) observePeak(seats []int) {
	for i, s := range seats {
		w.levels[i].peak = max(w.levels[i].peak, s)
	}
}

// seatQuantile returns the q quantile of the time-weighted seat demand: the fewest seats that
// covered the demand during a fraction q of the window.
func (a *levelAcc) seatQuantile(q float64) float64 {
	var total time.Duration
	for _, d := range a.demand {
		total += d
	}
	if total == 0 {
		return 0
	}
	want := q * float64(total)
	var cum time.Duration
	for s, d := range a.demand {
		cum += d
		if float64(cum) >= want {
			return float64(s)
		}
	}
	return float64(len(a.demand) - 1)
}

// waitQuantile returns the q quantile of waits (nearest rank) and whether there was any.
func waitQuantile(waits []time.Duration, q float64) (time.Duration, bool) {
	if len(waits) == 0 {
		return 0, false
	}
	s := slices.Clone(waits)
	slices.Sort(s)
	rank := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(rank, 0), len(s)-1)], true
}

// toAutopilot returns the window as the autopilot reads it: per level, the quantile q of the
// seat demand, the peak, the counts and the p99 wait, with the nominal seats in force at end.
func (w *window) toAutopilot(epoch time.Time, end time.Duration, names []string, nominal []int, q float64) autopilot.Window {
	out := autopilot.Window{Start: epoch.Add(w.start), End: epoch.Add(end), Levels: make(map[string]autopilot.Demand, len(names))}
	for i, name := range names {
		a := &w.levels[i]
		p99, known := waitQuantile(a.waits, 0.99)
		out.Levels[name] = autopilot.Demand{NominalSeats: float64(nominal[i]), Seats: a.seatQuantile(q),
			Peak: float64(a.peak), Dispatched: float64(a.dispatched), Rejected: float64(a.rejected),
			WaitP99: p99.Seconds(), WaitKnown: known}
	}
	return out
}
