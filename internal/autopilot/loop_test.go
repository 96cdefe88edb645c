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
	// One step per window, and the next step needs two new agreeing windows.
	levels, w = shifted(25, 15, 0)
	if s = l.Observe(t0.Add(2*time.Minute), levels, w); s.Changed {
		t.Errorf("a second step right after the first: %+v", s)
	}
	// a: need ceil(25 x 1.8 / 0.7) - 25 = 40, step max(1, 25 x 25%) = 6. b: gives
	// 15 - ceil(15 x 0.2 / 0.7) = 10, step max(1, 3) = 3. Transfer 3: a 28, b 12.
	if s = l.Observe(t0.Add(3*time.Minute), levels, w); !s.Changed || s.Applied["a"] != 28 || s.Applied["b"] != 12 {
		t.Errorf("second step: %+v", s.Applied)
	}
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
	// After the step, 60 rejections: > 50 and > 2 x 10.
	after, aw := shifted(s.Applied["a"], s.Applied["b"], 60)
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
	// 59 rejections after: > 50 but not > 2 x 30 = 60: no spike.
	after, aw := shifted(s.Applied["a"], s.Applied["b"], 59)
	if s = l.Observe(t0.Add(2*time.Minute), after, aw); s.RolledBack {
		t.Errorf("rolled back below the spike factor: %+v", s)
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
	after, aw := shifted(25, 15, 100)
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
