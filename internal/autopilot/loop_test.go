package autopilot

import (
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// shifted is the two-level pool a (pressured: u 1.8) and b (slack: u 0.2) at the given
// shares, with a's rejections; nominal seats follow shares. Git configures 20 shares each.
func shifted(sa, sb int32, rejected float64) ([]Level, Window) {
	a, da := lvl("a", sa, 1.8*float64(sa), rejected)
	b, db := lvl("b", sb, 0.2*float64(sb), 0)
	a.Bounds.MaxStepPercent, b.Bounds.MaxStepPercent = 25, 25
	a.ConfiguredShares, b.ConfiguredShares = 20, 20
	return []Level{a, b}, Window{Levels: map[string]Demand{"a": da, "b": db}}
}

func TestLoopNeedsAgreeingWindows(t *testing.T) {
	l := NewLoop(DefaultConfig(), Memory{})
	levels, w := shifted(20, 20, 0)
	s := l.Observe(t0, levels, w)
	if s.Changed || s.State != v1alpha1.AutopilotConfirming || s.Recommended["a"].Shares != 25 {
		t.Fatalf("window 1: %+v", s)
	}
	s = l.Observe(t0.Add(time.Minute), levels, w)
	// a +max(1, 20 x 25%) = 5, b -5.
	if !s.Changed || s.Applied["a"] != 25 || s.Applied["b"] != 15 || s.State != v1alpha1.AutopilotApplied {
		t.Fatalf("window 2: %+v", s)
	}
	m := l.Memory()
	if m.LastGood["a"] != 20 || m.LastGood["b"] != 20 || !m.LastChange.Equal(t0.Add(time.Minute)) {
		t.Errorf("memory after the step = %+v", m)
	}
	// The window after the step, measured at the new shares, still asks +a -b: with the
	// window before the step, that is two agreeing windows, so the loop steps again (one step
	// per window). a: need ceil(25 x 1.8 / 0.7) - 25 = 40, step max(1, 25 x 25%) = 6. b: gives
	// 15 - ceil(15 x 0.2 / 0.7) = 10, step max(1, 3) = 3. Transfer 3: a 28, b 12.
	levels, w = shifted(25, 15, 0)
	if s = l.Observe(t0.Add(2*time.Minute), levels, w); !s.Changed || s.Applied["a"] != 28 || s.Applied["b"] != 12 {
		t.Errorf("second step: %+v", s.Applied)
	}
	// A reversed ask restarts the count: b now under pressure, a slack; nothing moves.
	rl, rw := shifted(28, 12, 0)
	rw.Levels["a"], rw.Levels["b"] = rw.Levels["b"], rw.Levels["a"]
	rw.Levels["a"], rw.Levels["b"] = scaled(rw.Levels["a"], 28), scaled(rw.Levels["b"], 12)
	if s = l.Observe(t0.Add(3*time.Minute), rl, rw); s.Changed {
		t.Errorf("changed on the first reversed window: %+v", s)
	}
}

// scaled is d measured on nominal seats (same utilisation).
func scaled(d Demand, nominal float64) Demand {
	u := d.Seats / d.NominalSeats
	d.NominalSeats, d.Seats, d.Peak = nominal, u*nominal, u*nominal
	return d
}

func TestLoopDisagreementAndIncompleteReset(t *testing.T) {
	l := NewLoop(DefaultConfig(), Memory{})
	levels, w := shifted(20, 20, 0)
	l.Observe(t0, levels, w)
	if s := l.Observe(t0.Add(time.Minute), levels, Window{Incomplete: "counter reset"}); s.Changed || s.State != v1alpha1.AutopilotWaiting || s.Recommended != nil {
		t.Fatalf("incomplete window: %+v", s)
	}
	// The incomplete window reset the confirmation: one more agreeing window is not enough.
	if s := l.Observe(t0.Add(2*time.Minute), levels, w); s.Changed {
		t.Fatalf("changed right after an incomplete window: %+v", s)
	}
	// The reverse direction restarts the count.
	rl, rw := shifted(20, 20, 0)
	rw.Levels["a"], rw.Levels["b"] = rw.Levels["b"], rw.Levels["a"]
	if s := l.Observe(t0.Add(3*time.Minute), rl, rw); s.Changed {
		t.Fatalf("changed on a reversed recommendation: %+v", s)
	}
	if s := l.Observe(t0.Add(4*time.Minute), rl, rw); !s.Changed || s.Applied["a"] != 15 {
		t.Fatalf("two agreeing windows did not change: %+v", s)
	}
}

func TestLoopNewLeaderWaits(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Confirmations = 1
	l := NewLoop(cfg, Memory{LastGood: map[string]int32{"a": 20, "b": 20}, LastChange: t0})
	levels, w := shifted(20, 20, 0)
	if s := l.Observe(t0.Add(time.Minute), levels, w); s.Changed {
		t.Fatalf("a new loop changed in its first window: %+v", s)
	}
	if s := l.Observe(t0.Add(2*time.Minute), levels, w); !s.Changed {
		t.Fatalf("with one confirmation the second window must change: %+v", s)
	}
}

func TestLoopSpikeRollsBackAndFreezes(t *testing.T) {
	cfg := DefaultConfig()
	l := NewLoop(cfg, Memory{})
	levels, w := shifted(20, 20, 10)
	l.Observe(t0, levels, w)
	s := l.Observe(t0.Add(time.Minute), levels, w)
	if !s.Changed {
		t.Fatalf("no step: %+v", s)
	}
	// After the step, 60 rejections at b, which it lowered: > 50 and > 2 x 0 (a donor has
	// none when it gives: a rejecting level is under pressure).
	after, aw := donorRejects(60)(shifted(s.Applied["a"], s.Applied["b"], 10))
	s = l.Observe(t0.Add(2*time.Minute), after, aw)
	if !s.RolledBack || !s.Changed || s.Applied["a"] != 20 || s.Applied["b"] != 20 || s.State != v1alpha1.AutopilotFrozen {
		t.Fatalf("spike: %+v", s)
	}
	until := t0.Add(2*time.Minute + cfg.Freeze)
	if !s.FrozenUntil.Equal(until) || !l.Memory().FrozenUntil.Equal(until) {
		t.Errorf("frozen until %s, memory %s; want %s", s.FrozenUntil, l.Memory().FrozenUntil, until)
	}
	// Nothing changes while frozen, even with agreeing windows, nor in a Loop resumed from memory.
	resumed := NewLoop(cfg, l.Memory())
	for i := 3; i < 30; i++ {
		for _, loop := range []*Loop{l, resumed} {
			if s := loop.Observe(t0.Add(time.Duration(i)*time.Minute), levels, w); s.Changed || s.State != v1alpha1.AutopilotFrozen {
				t.Fatalf("minute %d while frozen: %+v", i, s)
			}
		}
	}
	if s := l.Observe(t0.Add(31*time.Minute), levels, Window{Incomplete: "restart"}); s.State != v1alpha1.AutopilotFrozen || s.FrozenUntil.IsZero() {
		t.Errorf("an incomplete window while frozen: %+v", s)
	}
	l.Observe(t0.Add(33*time.Minute), levels, w)
	if s := l.Observe(t0.Add(34*time.Minute), levels, w); !s.Changed {
		t.Errorf("no step after the freeze: %+v", s)
	}
}

func TestLoopNoSpikeBelowThresholds(t *testing.T) {
	l := NewLoop(DefaultConfig(), Memory{})
	levels, w := shifted(20, 20, 30)
	l.Observe(t0, levels, w)
	s := l.Observe(t0.Add(time.Minute), levels, w)
	if !s.Changed {
		t.Fatalf("no step: %+v", s)
	}
	// 50 rejections at the donor b after: not > 50: no spike.
	after, aw := donorRejects(50)(shifted(s.Applied["a"], s.Applied["b"], 30))
	if s = l.Observe(t0.Add(2*time.Minute), after, aw); s.RolledBack {
		t.Errorf("rolled back below the spike threshold: %+v", s)
	}
}

func TestLoopReceiverRejectionsAreNoSpike(t *testing.T) {
	l := NewLoop(DefaultConfig(), Memory{})
	levels, w := shifted(20, 20, 10)
	l.Observe(t0, levels, w)
	s := l.Observe(t0.Add(time.Minute), levels, w)
	// 500 rejections at a, which the step raised: its demand grew; rolling back would take
	// seats from it. Not a spike the step caused.
	after, aw := shifted(s.Applied["a"], s.Applied["b"], 500)
	if s = l.Observe(t0.Add(2*time.Minute), after, aw); s.RolledBack {
		t.Errorf("rolled back on the raised level's rejections: %+v", s)
	}
}

// donorRejects sets the rejections of b, the level shifted's pressure lowers.
func donorRejects(n float64) func([]Level, Window) ([]Level, Window) {
	return func(levels []Level, w Window) ([]Level, Window) {
		d := w.Levels["b"]
		d.Rejected = n
		w.Levels["b"] = d
		return levels, w
	}
}

func TestPoolIsStable(t *testing.T) {
	p := Pool(map[string]int32{"a": 10, "b": 20})
	if p != Pool(map[string]int32{"b": 20, "a": 10}) || len(p) != 16 {
		t.Errorf("pool %q not stable", p)
	}
	if p == Pool(map[string]int32{"a": 10, "b": 21}) || p == Pool(map[string]int32{"a": 10}) {
		t.Error("different pools share an id")
	}
	// "a=1" + "0" must differ from "a=10": the lines are terminated.
	if Pool(map[string]int32{"a": 1, "b": 0}) == Pool(map[string]int32{"a": 10}) {
		t.Error("ambiguous pool encoding")
	}
}

func TestLoopForgetsAnotherPool(t *testing.T) {
	l := NewLoop(DefaultConfig(), Memory{})
	levels, w := shifted(20, 20, 0)
	l.Observe(t0, levels, w)
	// Git changed b's configured shares: the first window of the new pool confirms nothing.
	changed := append([]Level(nil), levels...)
	changed[1].ConfiguredShares = 30
	if s := l.Observe(t0.Add(time.Minute), changed, w); s.Changed {
		t.Fatalf("changed on the first window of a new pool: %+v", s)
	}
	if s := l.Observe(t0.Add(2*time.Minute), changed, w); !s.Changed {
		t.Fatalf("two windows of the new pool did not change: %+v", s)
	}
	// A spike after that step restores the shares before it (of the new pool).
	after, aw := donorRejects(100)(shifted(25, 15, 0))
	after[0].ConfiguredShares, after[1].ConfiguredShares = 20, 30
	if s := l.Observe(t0.Add(3*time.Minute), after, aw); !s.RolledBack || s.Applied["a"] != 20 || s.Applied["b"] != 20 {
		t.Fatalf("rollback: %+v", s)
	}
}

func TestMemoryRoundTrip(t *testing.T) {
	mem := Memory{LastGood: map[string]int32{"a": 20, "b": 20}, LastChange: t0, FrozenUntil: t0.Add(time.Hour)}
	l := NewLoop(DefaultConfig(), mem)
	mem.LastGood["a"] = 99 // the caller's map is not the loop's
	got := l.Memory()
	if got.LastGood["a"] != 20 || !got.LastChange.Equal(t0) || !got.FrozenUntil.Equal(t0.Add(time.Hour)) {
		t.Errorf("memory = %+v", got)
	}
	got.LastGood["b"] = 99
	if l.Memory().LastGood["b"] != 20 {
		t.Error("Memory() returned the loop's own map")
	}
}

// A third level that enters and leaves the band does not reset the confirmation of the two
// that need to trade: a (u 1.8) and b (u 0.2) ask the same in both windows, c is within the
// band (u 0.7) in the first and under pressure (u 0.95) in the second, so it is held. a gains
// max(1, 20 x 25%) = 5 shares, b gives 5 (it could give 20 - ceil(20 x 0.2 / 0.7) = 14).
func TestLoopConfirmsPerLevel(t *testing.T) {
	l := NewLoop(DefaultConfig(), Memory{})
	window := func(cSeats float64) ([]Level, Window) {
		levels, w := shifted(20, 20, 0)
		c, dc := lvl("c", 20, cSeats, 0)
		c.Bounds.MaxStepPercent = 25
		w.Levels["c"] = dc
		return append(levels, c), w
	}
	levels, w := window(14)
	if s := l.Observe(t0, levels, w); s.Changed {
		t.Fatalf("window 1 changed: %+v", s)
	}
	levels, w = window(19)
	s := l.Observe(t0.Add(time.Minute), levels, w)
	if !s.Changed || s.Applied["a"] != 25 || s.Applied["b"] != 15 || s.Applied["c"] != 20 {
		t.Fatalf("window 2: %+v", s)
	}
	// What the window alone recommends (status.autopilot.recommendedShares) still counts c:
	// a and c ask 5 each (their steps), b gives 5, split 2.5 / 2.5, the odd share to a.
	if r := s.Recommended["c"]; r.Shares != 22 {
		t.Errorf("c's recommendation = %d shares, want 22: %s", r.Shares, r.Why)
	}
}

// TestLoopIdlePoolHolds: every level slack, none under pressure: nothing can move, and the
// state says Holding (not Confirming) in every window.
func TestLoopIdlePoolHolds(t *testing.T) {
	a, da := lvl("a", 20, 2, 0)
	b, db := lvl("b", 20, 3, 0)
	levels, w := []Level{a, b}, Window{Levels: map[string]Demand{"a": da, "b": db}}
	l := NewLoop(DefaultConfig(), Memory{})
	for i := range 5 {
		if s := l.Observe(t0.Add(time.Duration(i)*time.Minute), levels, w); s.Changed || s.State != v1alpha1.AutopilotHolding {
			t.Fatalf("window %d of an idle pool: %+v", i, s)
		}
	}
}
