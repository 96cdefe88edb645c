package autopilot

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// plant is a deterministic model of how kube-apiserver measures two levels sharing a pool.
// Each level has a fixed true demand in seats. kube-apiserver gives a Limited level
// ceil(SCL x shares / sum of all shares) nominal seats, the sum counting its own levels too;
// a level can hold at most its seats plus its queues' capacity, so the demand measured is
// min(true, nominal + queue capacity) and the requests beyond it are rejected (the recommender
// inflates the demand back by them). Each window adds a deterministic +-5% noise per level.
type plant struct {
	scl         float64
	otherShares int32
	queueSeats  float64
	noise       float64
	trueSeats   map[string]float64
	rng         *rand.Rand
}

// kubeAPIServerShares is the sum of kube-apiserver's own Limited levels' shares (system 30,
// leader-election 10, node-high 40, workload-high 40, workload-low 100, global-default 20,
// catch-all 5).
const kubeAPIServerShares = 245

func newPlant(trueA, trueB float64) *plant {
	return &plant{scl: 600, otherShares: kubeAPIServerShares, queueSeats: 10, noise: 0.1,
		trueSeats: map[string]float64{"a": trueA, "b": trueB}, rng: rand.New(rand.NewPCG(26, 1))}
}

// window measures the levels at the shares in force.
func (p *plant) window(levels []Level, start time.Time) Window {
	sum := p.otherShares
	for _, l := range levels {
		sum += l.Shares
	}
	w := Window{Start: start, End: start.Add(time.Minute), Levels: map[string]Demand{}}
	// The noise moves a few seats of demand from one level to the other: the total is fixed.
	shift := p.trueSeats["a"] * p.noise * (p.rng.Float64() - 0.5)
	for _, l := range levels {
		nominal := math.Ceil(p.scl * float64(l.Shares) / float64(sum))
		demand := p.trueSeats[l.Name] + shift
		if l.Name != "a" {
			demand = p.trueSeats[l.Name] - shift
		}
		measured := math.Min(demand, nominal+p.queueSeats)
		arrivals := math.Round(demand * 100)
		rejected := math.Round(arrivals * (1 - measured/demand))
		w.Levels[l.Name] = Demand{NominalSeats: nominal, Seats: measured, Peak: measured * 1.2,
			Dispatched: arrivals - rejected, Rejected: rejected}
	}
	return w
}

// runPlant runs the loop on the plant for n windows and returns which windows changed shares
// and a's shares after each window (for the failure message).
func runPlant(t *testing.T, cfg Config, p *plant, n int) ([]bool, []int32) {
	t.Helper()
	levels := []Level{
		{Name: "a", Shares: 50, ConfiguredShares: 50, Bounds: Bounds{MinShares: 5, MaxShares: 95, MaxStepPercent: 25}},
		{Name: "b", Shares: 50, ConfiguredShares: 50, Bounds: Bounds{MinShares: 5, MaxShares: 95, MaxStepPercent: 25}},
	}
	loop := NewLoop(cfg, Memory{})
	changed, trajectory := make([]bool, n), make([]int32, n)
	for i := range n {
		start := t0.Add(time.Duration(i) * time.Minute)
		s := loop.Observe(start.Add(time.Minute), levels, p.window(levels, start))
		if s.Applied["a"]+s.Applied["b"] != 100 {
			t.Fatalf("window %d: the pool's sum changed: %v", i, s.Applied)
		}
		changed[i] = s.Changed
		for j := range levels {
			levels[j].Shares = s.Applied[levels[j].Name]
		}
		trajectory[i] = levels[0].Shares
	}
	return changed, trajectory
}

func count(changed []bool) int {
	n := 0
	for _, c := range changed {
		if c {
			n++
		}
	}
	return n
}

// The pool holds 100 of 345 shares: 600 x 100 / 345 = 174 seats. a needs 90 seats, b 32:
// 122 in all, 0.70 of the pool's seats, so both levels can sit at the target together.
func TestLoopSettles(t *testing.T) {
	changed, a := runPlant(t, DefaultConfig(), newPlant(90, 32), 60)
	if n := count(changed[:30]); n == 0 || n > 4 {
		t.Errorf("%d changes in the first 30 windows, want 1 to 4", n)
	}
	if n := count(changed[30:]); n != 0 {
		t.Errorf("%d changes in the last 30 windows, want none", n)
	}
	if t.Failed() {
		t.Logf("a's shares window by window: %v", a)
	}
}

func TestPlantOscillatesWithoutHysteresis(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HighWater, cfg.LowWater = cfg.TargetUtilisation, cfg.TargetUtilisation
	cfg.Confirmations, cfg.MinChangePercent = 1, 0
	changed, a := runPlant(t, cfg, newPlant(90, 32), 60)
	if n := count(changed[30:]); n <= 10 {
		t.Errorf("%d changes in the last 30 windows without hysteresis, want more than 10: the plant does not show what the hysteresis prevents", n)
		t.Logf("a's shares window by window: %v", a)
	}
}
