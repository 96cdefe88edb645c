package autopilot

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// demandBounds are kube-apiserver's demand_seats buckets.
var demandBounds = []float64{0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4, 1.7, 2, 2.8, 4, 6, math.Inf(1)}

// read is one read of level "l": nominal and current limit seats, the cumulative demand
// histogram (ns at most each bound), dispatched and rejected counters, high watermark.
func read(at time.Time, nominal, current float64, cum []float64, dispatched, rejected, hwm float64) *apfmetrics.Snapshot {
	k := apfmetrics.Key{PriorityLevel: "l", FlowSchema: "f"}
	return &apfmetrics.Snapshot{Time: at,
		Levels: map[string]apfmetrics.LevelSeats{"l": {Nominal: nominal, CurrentLimit: current}},
		Flows: map[apfmetrics.Key]*apfmetrics.Flow{k: {Dispatched: dispatched,
			Rejected: map[string]float64{apfmetrics.ReasonQueueFull: rejected}}},
		Demand: map[string]*apfmetrics.LevelDemand{"l": {HighWatermark: hwm,
			Ratio: apfmetrics.Histogram{Bounds: demandBounds, Counts: cum, Count: cum[len(cum)-1]}}}}
}

// cumulative turns per-bucket nanoseconds into cumulative counts.
func cumulative(per ...float64) []float64 {
	out := make([]float64, len(per))
	var sum float64
	for i, v := range per {
		sum += v
		out[i] = sum
	}
	return out
}

func TestWindowFrom(t *testing.T) {
	cfg := DefaultConfig()
	zero := cumulative(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	prev := read(t0, 10, 10, zero, 100, 5, 0)
	// 20 s: 10 s at ratio <= 0.2, 9 s in (1, 1.2], 1 s in (1.2, 1.4].
	per := cumulative(10e9, 0, 0, 0, 0, 9e9, 1e9, 0, 0, 0, 0, 0, 0)
	cur := read(t0.Add(20*time.Second), 10, 8, per, 300, 25, 11)
	w := WindowFrom(cfg, prev, cur, []string{"l"})
	if w.Incomplete != "" {
		t.Fatalf("incomplete: %s", w.Incomplete)
	}
	d := w.Levels["l"]
	// p95 rank 19e9 ns, reached at le 1.2 (10e9 + 9e9): 1 + 0.2 x 9/9 = 1.2, times the
	// current limit 8 (kube-apiserver's denominator, not the nominal 10) = 9.6 seats.
	if math.Abs(d.Seats-9.6) > 1e-9 || d.NominalSeats != 10 {
		t.Errorf("seats %v on %v nominal, want 9.6 on 10", d.Seats, d.NominalSeats)
	}
	// Peak: the highest bucket with time starts at 1.2 (9.6 seats); the gauge says 11.
	if d.Peak != 11 || d.Dispatched != 200 || d.Rejected != 20 {
		t.Errorf("peak %v, dispatched %v, rejected %v; want 11, 200, 20", d.Peak, d.Dispatched, d.Rejected)
	}
}

func TestWindowFromAboveTopBucket(t *testing.T) {
	zero := cumulative(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	per := cumulative(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20e9)
	cur := read(t0.Add(time.Minute), 4, 4, per, 0, 0, 31)
	d := WindowFrom(DefaultConfig(), read(t0, 4, 4, zero, 0, 0, 0), cur, []string{"l"}).Levels["l"]
	// Above 6 x 4 = 24 seats: the high watermark 31 says more.
	if d.Seats != 31 {
		t.Errorf("seats above the top bucket = %v, want 31", d.Seats)
	}
}

func TestWindowFromIncomplete(t *testing.T) {
	cfg := DefaultConfig()
	zero := cumulative(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	per := cumulative(20e9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	prev := read(t0, 10, 10, zero, 100, 5, 0)
	cur := read(t0.Add(20*time.Second), 10, 10, per, 300, 25, 1)
	noDemand := read(t0, 10, 10, zero, 100, 5, 0)
	noDemand.Demand = nil
	cases := map[string]struct {
		prev, cur *apfmetrics.Snapshot
		levels    []string
		want      string
	}{
		"first read":     {nil, cur, []string{"l"}, "one read only"},
		"too short":      {prev, read(t0.Add(5*time.Second), 10, 10, per, 300, 25, 1), []string{"l"}, "shorter than 15s"},
		"missing level":  {prev, cur, []string{"l", "m"}, "m: no nominal seats series"},
		"counter reset":  {prev, read(t0.Add(20*time.Second), 10, 10, per, 50, 25, 1), []string{"l"}, "counter went backwards"},
		"no demand prev": {noDemand, cur, []string{"l"}, "no demand series in the earlier read"},
	}
	for name, c := range cases {
		w := WindowFrom(cfg, c.prev, c.cur, c.levels)
		if !strings.Contains(w.Incomplete, c.want) {
			t.Errorf("%s: incomplete %q, want it to say %q", name, w.Incomplete, c.want)
		}
	}
	// One read still measures since kube-apiserver's start (for recommend).
	if w := WindowFrom(cfg, nil, cur, []string{"l"}); w.Levels["l"].Dispatched != 300 {
		t.Errorf("one read: %+v", w.Levels)
	}
}

func TestWindowFromIdleLevelHasNoDemand(t *testing.T) {
	zero := cumulative(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	idle := cumulative(20e9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	cases := []struct {
		name      string
		sum, want float64
	}{
		// Interpolation alone says 0.95 x 0.2 = 0.19 of 10 seats; the mean 0 bounds it to 0.
		{"idle", 0, 0},
		// Ratio 0.005 all the time: mean 0.005, bound 0.005 / 0.05 = 0.1, i.e. 1 seat of 10.
		{"nearly idle", 0.005 * 20e9, 1},
		// A mean above the bucket interpolation leaves the interpolation: 1.9 seats.
		{"mean above", 0.15 * 20e9, 1.9},
	}
	for _, c := range cases {
		cur := read(t0.Add(20*time.Second), 10, 10, idle, 0, 0, 0)
		cur.Demand["l"].Ratio.Sum = c.sum
		d := WindowFrom(DefaultConfig(), read(t0, 10, 10, zero, 0, 0, 0), cur, []string{"l"}).Levels["l"]
		if math.Abs(d.Seats-c.want) > 1e-9 || d.Peak < d.Seats {
			t.Errorf("%s: seats %v (peak %v), want %v", c.name, d.Seats, d.Peak, c.want)
		}
	}
}

func TestWindowFromMalformedNeverPanics(t *testing.T) {
	zero := cumulative(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	per := cumulative(20e9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	mutations := map[string]func(*apfmetrics.Snapshot){
		"short counts": func(s *apfmetrics.Snapshot) { s.Demand["l"].Ratio.Counts = s.Demand["l"].Ratio.Counts[:3] },
		"NaN count":    func(s *apfmetrics.Snapshot) { s.Demand["l"].Ratio.Counts[2] = math.NaN() },
		"nil demand":   func(s *apfmetrics.Snapshot) { s.Demand["l"] = nil },
		"nil maps":     func(s *apfmetrics.Snapshot) { s.Demand, s.Levels, s.Flows = nil, nil, nil },
	}
	for name, mutate := range mutations {
		cur := read(t0.Add(20*time.Second), 10, 10, per, 300, 25, 1)
		mutate(cur)
		w := WindowFrom(DefaultConfig(), read(t0, 10, 10, zero, 100, 5, 0), cur, []string{"l"})
		if w.Incomplete == "" || len(w.Levels) != 0 {
			t.Errorf("%s: window %+v, want incomplete without the level", name, w)
		}
	}
	if w := WindowFrom(DefaultConfig(), nil, nil, []string{"l"}); w.Incomplete == "" {
		t.Error("no reads at all made a complete window")
	}
}
