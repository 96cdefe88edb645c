package fairqueue

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/shufflesharding"
)

const fairnessMargin = 0.03

// runFairness simulates flows at one level of the given capacity and returns each flow's
// measured share of the executing width and its max-min fair share, over [warmup, until).
func runFairness(t *testing.T, cfg Config, capacity int, flows []*simFlow, warmup, until time.Duration) (measured, fair []float64) {
	t.Helper()
	set, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &sim{set: set, capacity: capacity, flows: flows, from: warmup, to: until}
	s.run(rand.New(rand.NewPCG(42, 7)), until)
	s.checkChoices(t)
	window := float64(until - warmup)
	demands := make([]float64, len(flows))
	for i, f := range flows {
		measured = append(measured, float64(f.seatTime)/window/float64(capacity))
		demands[i] = -1
		if f.backlog == 0 {
			demands[i] = float64(f.offered) / window / float64(capacity)
		}
	}
	return measured, maxMinFair(1, demands)
}

func maxError(measured, fair []float64) (worst float64, at int) {
	for i := range measured {
		if e := math.Abs(measured[i] - fair[i]); e > worst {
			worst, at = e, i
		}
	}
	return worst, at
}

// heavyAndLight is one backlogged flow of short requests and 20 light flows that each offer
// 0.8 seat, just below the 20/21 seat a flow would get if all were backlogged.
func heavyAndLight() []*simFlow {
	exp := func(mean time.Duration) func(*rand.Rand) time.Duration {
		return func(r *rand.Rand) time.Duration { return expDuration(r, mean) + time.Millisecond }
	}
	flows := []*simFlow{{hash: shufflesharding.Hash("heavy", ""), width: 1, backlog: 200, service: exp(50 * time.Millisecond)}}
	for i := 0; i < 20; i++ {
		flows = append(flows, &simFlow{hash: shufflesharding.Hash("light", string(rune('a'+i))), width: 1,
			interval: 125 * time.Millisecond, service: exp(99 * time.Millisecond)})
	}
	return flows
}

func TestFairnessOneHeavyManyLight(t *testing.T) {
	cfg := Config{QueuesPerWidth: 64, HandSize: 6, QueueLengthLimit: 50}
	measured, fair := runFairness(t, cfg, 20, heavyAndLight(), 10*time.Second, 130*time.Second)
	if worst, at := maxError(measured, fair); worst > fairnessMargin {
		t.Errorf("flow %d: measured share %.4f, max-min fair share %.4f: error %.4f > %.2f (measured %v, fair %v)",
			at, measured[at], fair[at], worst, fairnessMargin, measured, fair)
	}
	if fair[0] < 0.1 || fair[1] > 0.05 {
		t.Fatalf("scenario drifted: fair shares %v; want the heavy flow to get the rest of the light flows' demand", fair)
	}
}

// TestFairnessControlFIFO runs the same scenario with one queue: the heavy flow keeps it full,
// the light flows are rejected, and the error is far above the margin. It shows that the test
// above can fail.
func TestFairnessControlFIFO(t *testing.T) {
	cfg := Config{QueuesPerWidth: 1, QueueLengthLimit: 50}
	measured, fair := runFairness(t, cfg, 20, heavyAndLight(), 10*time.Second, 130*time.Second)
	if worst, _ := maxError(measured, fair); worst < 0.1 {
		t.Errorf("one FIFO queue: fairness error %.4f; want far above %.2f (measured %v, fair %v)", worst, fairnessMargin, measured, fair)
	}
}

// TestFairnessBackloggedDurations: two backlogged flows, one of 5 ms requests and one of 1 s
// requests, share the seat-time evenly (max-min with both unbounded: 0.5 each), which a FIFO
// (or per-request round robin) would not: it gives seat-time in proportion to duration.
func TestFairnessBackloggedDurations(t *testing.T) {
	fixed := func(d time.Duration) func(*rand.Rand) time.Duration {
		return func(*rand.Rand) time.Duration { return d }
	}
	flows := []*simFlow{
		{hash: 3, width: 1, backlog: 40, service: fixed(5 * time.Millisecond)},
		{hash: 9, width: 1, backlog: 40, service: fixed(time.Second)},
	}
	cfg := Config{QueuesPerWidth: 16, HandSize: 1, QueueLengthLimit: 50}
	measured, fair := runFairness(t, cfg, 10, flows, 10*time.Second, 130*time.Second)
	if worst, at := maxError(measured, fair); worst > fairnessMargin {
		t.Errorf("flow %d: measured %.4f, fair %.4f (measured %v)", at, measured[at], fair[at], measured)
	}
}

// TestFairnessMixedWidths: a backlogged flow of mutating (width 2) requests and one of
// read-only requests. Queues compete per request, so the mutating flow gets two seats for each
// of the other's: 2/3 and 1/3 of the executing width (the proposal's "counting queues of
// mutating requests twice").
func TestFairnessMixedWidths(t *testing.T) {
	fixed := func(d time.Duration) func(*rand.Rand) time.Duration {
		return func(*rand.Rand) time.Duration { return d }
	}
	flows := []*simFlow{
		{hash: 1, width: 1, backlog: 40, service: fixed(100 * time.Millisecond)},
		{hash: 2, width: 2, backlog: 40, service: fixed(100 * time.Millisecond)},
	}
	cfg := Config{QueuesPerWidth: 8, HandSize: 1, QueueLengthLimit: 50}
	set, _ := New(cfg)
	s := &sim{set: set, capacity: 12, flows: flows, from: 5 * time.Second, to: 65 * time.Second}
	s.run(rand.New(rand.NewPCG(1, 1)), 65*time.Second)
	s.checkChoices(t)
	window := float64(60 * time.Second * 12)
	got := []float64{float64(flows[0].seatTime) / window, float64(flows[1].seatTime) / window}
	if math.Abs(got[0]-1.0/3) > fairnessMargin || math.Abs(got[1]-2.0/3) > fairnessMargin {
		t.Errorf("shares %v; want [0.333 0.667]", got)
	}
}

// TestDefaultGuessProtectsLightFlows: with a heavy flow of long (1 s) requests, the default G
// of one minute keeps the shares fair and the light flows' p99 wait low; upstream Kubernetes'
// 3 ms guess lets the heavy flow's queues take free seats while their long requests still look
// cheap, and the light flows wait several times longer. This is why the proposal's G is the
// default.
func TestDefaultGuessProtectsLightFlows(t *testing.T) {
	run := func(g time.Duration) (fairnessError float64, p99 time.Duration) {
		flows := heavyAndLight()
		flows[0].service = func(r *rand.Rand) time.Duration { return expDuration(r, time.Second) }
		cfg := Config{QueuesPerWidth: 64, HandSize: 6, QueueLengthLimit: 50, ServiceTimeGuess: g}
		measured, fair := runFairness(t, cfg, 20, flows, 10*time.Second, 130*time.Second)
		fairnessError, _ = maxError(measured, fair)
		var waits []time.Duration
		for _, f := range flows[1:] {
			waits = append(waits, f.waits...)
		}
		slices.Sort(waits)
		return fairnessError, waits[len(waits)*99/100]
	}
	defErr, defP99 := run(0)
	smallErr, smallP99 := run(3 * time.Millisecond)
	t.Logf("G=1m: fairness error %.4f, light p99 wait %v; G=3ms: %.4f, %v", defErr, defP99, smallErr, smallP99)
	if defErr > fairnessMargin {
		t.Errorf("default G: fairness error %.4f > %.2f", defErr, fairnessMargin)
	}
	if defP99 > 2*time.Second || smallP99 < 2*defP99 {
		t.Errorf("light p99 wait %v with the default G, %v with G = 3 ms; want the default below 2 s and well below the other",
			defP99, smallP99)
	}
}
