package autopilot

import (
	"math"
	"strings"
	"testing"
)

// lvl is a level of shares whose nominal seats equal its shares, unbounded but for a 100%
// step, and its window demand: seats (the p95), rejected and dispatched requests.
func lvl(name string, shares int32, seats, rejected float64) (Level, Demand) {
	return Level{Name: name, Shares: shares, ConfiguredShares: shares, Bounds: Bounds{MinShares: 1, MaxStepPercent: 100}},
		Demand{NominalSeats: float64(shares), Seats: seats, Peak: seats, Dispatched: 1000, Rejected: rejected}
}

// pool builds the levels and their window.
func pool(entries ...func() (Level, Demand)) ([]Level, Window) {
	w := Window{Levels: map[string]Demand{}}
	var levels []Level
	for _, e := range entries {
		l, d := e()
		levels = append(levels, l)
		w.Levels[l.Name] = d
	}
	return levels, w
}

func entry(l Level, d Demand) func() (Level, Demand) { return func() (Level, Demand) { return l, d } }

func shares(recs map[string]Recommendation) map[string]int32 {
	out := map[string]int32{}
	for n, r := range recs {
		out[n] = r.Shares
	}
	return out
}

func TestRecommendArithmetic(t *testing.T) {
	step25 := func(l Level, d Demand) (Level, Demand) { l.Bounds.MaxStepPercent = 25; return l, d }
	noMin := DefaultConfig()
	noMin.MinChangePercent = 0
	cases := []struct {
		name   string
		cfg    Config
		levels []func() (Level, Demand)
		want   map[string]int32
	}{{
		// a: u = 18/10 = 1.8, need ceil(10 x 1.8 / 0.7) - 10 = 26 - 10 = 16.
		// b: u = 2/10 = 0.2, gives 10 - ceil(10 x 0.2 / 0.7) = 10 - 3 = 7. Transfer min(16, 7) = 7.
		name:   "slack gives all it can",
		cfg:    DefaultConfig(),
		levels: []func() (Level, Demand){entry(lvl("a", 10, 18, 0)), entry(lvl("b", 10, 2, 0))},
		want:   map[string]int32{"a": 17, "b": 3},
	}, {
		// Same with a 25% step: each side capped at max(1, 10 x 25 / 100) = 2.
		name:   "step caps",
		cfg:    DefaultConfig(),
		levels: []func() (Level, Demand){entry(step25(lvl("a", 10, 18, 0))), entry(step25(lvl("b", 10, 2, 0)))},
		want:   map[string]int32{"a": 12, "b": 8},
	}, {
		// a and c: u = 10.5/10 = 1.05, need ceil(15) - 10 = 5 each. b: u = 0.49, gives
		// 10 - ceil(7) = 3. 3 split 1.5 / 1.5: floors 1 and 1, the unit left to a (tie, by name).
		name:   "largest remainder, ties by name",
		cfg:    noMin,
		levels: []func() (Level, Demand){entry(lvl("a", 10, 10.5, 0)), entry(lvl("b", 10, 4.9, 0)), entry(lvl("c", 10, 10.5, 0))},
		want:   map[string]int32{"a": 12, "b": 7, "c": 11},
	}, {
		// a: 40 shares, u 1.5, step 10. c: 5 shares, u 2, step max(1, 1.25) = 1. b: 10 shares,
		// u 0.2, gives 7 capped at step 2. Split 2 over (10, 1): a 1.82 -> 1+1 = 2, c 0.18 -> 0.
		// a's +2 is below 10% of 40 = 4: dropped; then c +1 (>= 0.5) and b -1 (>= 1).
		name: "MinChangePercent drops a move, the pool stays zero-sum",
		cfg:  DefaultConfig(),
		levels: []func() (Level, Demand){entry(step25(lvl("a", 40, 60, 0))), entry(step25(lvl("b", 10, 2, 0))),
			entry(step25(lvl("c", 5, 10, 0)))},
		want: map[string]int32{"a": 40, "b": 9, "c": 6},
	}, {
		// a: u 0.8 is inside the band, but 30 of 1030 requests were rejected: inflation
		// 1/(1 - 30/1030) = 1.03, u = 0.824, need ceil(10 x 0.824 / 0.7) - 10 = 12 - 10 = 2.
		name:   "rejections put a level under pressure",
		cfg:    DefaultConfig(),
		levels: []func() (Level, Demand){entry(lvl("a", 10, 8, 30)), entry(lvl("b", 10, 2, 0))},
		want:   map[string]int32{"a": 12, "b": 8},
	}, {
		// a: 8 dispatched, 992 rejected: inflation capped at 4, u = 4 x 3 / 10 = 1.2, need
		// ceil(17.1) - 10 = 8; b gives 7.
		name: "inflation capped",
		cfg:  DefaultConfig(),
		levels: []func() (Level, Demand){func() (Level, Demand) {
			l, d := lvl("a", 10, 3, 992)
			d.Dispatched = 8
			return l, d
		}, entry(lvl("b", 10, 2, 0))},
		want: map[string]int32{"a": 17, "b": 3},
	}, {
		// a: u 0.8 and b: u 0.6 are both inside the band: nothing moves.
		name:   "dead band holds",
		cfg:    DefaultConfig(),
		levels: []func() (Level, Demand){entry(lvl("a", 10, 8, 0)), entry(lvl("b", 10, 6, 0))},
		want:   map[string]int32{"a": 10, "b": 10},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			levels, w := pool(c.levels...)
			got := shares(Recommend(c.cfg, levels, w))
			for n, v := range c.want {
				if got[n] != v {
					t.Errorf("%s: shares %d, want %d (all: %v)", n, got[n], v, got)
				}
			}
		})
	}
}

func TestRecommendBounds(t *testing.T) {
	a, da := lvl("a", 10, 18, 0)
	a.Bounds.MaxShares = 12
	b, db := lvl("b", 10, 2, 0)
	b.Bounds.MinShares = 9
	w := Window{Levels: map[string]Demand{"a": da, "b": db}}
	// a may gain 12 - 10 = 2, b may give 10 - 9 = 1: transfer 1.
	got := shares(Recommend(DefaultConfig(), []Level{a, b}, w))
	if got["a"] != 11 || got["b"] != 9 {
		t.Errorf("shares = %v, want a 11, b 9", got)
	}
	a.Shares, a.Bounds.MaxShares = 12, 12
	recs := Recommend(DefaultConfig(), []Level{a, b}, w)
	if recs["a"].Shares != 12 || recs["b"].Shares != 10 || !strings.Contains(recs["a"].Why, "maxShares 12") {
		t.Errorf("at maxShares: %v, why %q", shares(recs), recs["a"].Why)
	}
}

func TestRecommendPoolOfOneAndMissingLevels(t *testing.T) {
	levels, w := pool(entry(lvl("a", 10, 30, 500)))
	if r := Recommend(DefaultConfig(), levels, w)["a"]; r.Shares != 10 || r.Direction != Hold {
		t.Errorf("a pool of one moved: %+v", r)
	}
	levels, w = pool(entry(lvl("a", 10, 18, 0)), entry(lvl("b", 10, 2, 0)), entry(lvl("c", 10, 2, 0)))
	delete(w.Levels, "b")
	recs := Recommend(DefaultConfig(), levels, w)
	// b has no measurement: held; a (need 16) takes c's 7.
	if recs["b"].Shares != 10 || !strings.Contains(recs["b"].Why, "no demand measured") || recs["a"].Shares != 17 || recs["c"].Shares != 3 {
		t.Errorf("missing level: %v, b why %q", shares(recs), recs["b"].Why)
	}
}

func TestRecommendLendableBorrowingAndWhy(t *testing.T) {
	a, da := lvl("a", 10, 18, 310)
	a.Bounds.MaxStepPercent = 40
	b, db := lvl("b", 10, 2, 0)
	b.Bounds.MaxStepPercent = 40
	limit := int32(20)
	b.BorrowingLimitPercent = &limit
	db.Peak = 12
	recs := Recommend(DefaultConfig(), []Level{a, b}, Window{Levels: map[string]Demand{"a": da, "b": db}})
	// a: 310 of 1310 rejected, inflation 1310/1000 = 1.31, u = 18 x 1.31 / 10 = 2.358; step 4.
	ra, rb := recs["a"], recs["b"]
	if ra.Shares != 14 || rb.Shares != 6 {
		t.Fatalf("shares = %v, want a 14, b 6", shares(recs))
	}
	if want := "under pressure: demand p95 18.0 seats, 23.6 counting the 310 rejected of 1310, on 10 nominal (utilisation 2.36); +4 shares for utilisation 1.68"; ra.Why != want {
		t.Errorf("a why = %q\nwant %q", ra.Why, want)
	}
	// b: new nominal 10 x 6 / 10 = 6 seats; idle 100 x (1 - 2/6) = 66.7 -> 65 (was 0).
	// Peak 12 on 6: 100 x (12/6 - 1) = 100 -> 100 (was 20).
	if rb.LendablePercent != 65 || rb.BorrowingLimitPercent == nil || *rb.BorrowingLimitPercent != 100 {
		t.Errorf("b lendable %d, borrowing %v; want 65, 100", rb.LendablePercent, rb.BorrowingLimitPercent)
	}
	if limit != 20 {
		t.Error("the level's borrowing limit was changed in place")
	}
	// a: new nominal 14, demand 23.6: no idle seats -> 0, the same as now: kept. No limit: nil.
	if ra.LendablePercent != 0 || ra.BorrowingLimitPercent != nil {
		t.Errorf("a lendable %d, borrowing %v; want 0, nil", ra.LendablePercent, ra.BorrowingLimitPercent)
	}
	if !strings.HasPrefix(rb.Why, "slack: demand p95 2.0 seats on 10 nominal (utilisation 0.20); -4 shares") {
		t.Errorf("b why = %q", rb.Why)
	}
}

func TestLendableKeepsSmallChanges(t *testing.T) {
	// 100 x (1 - 5/10) = 50: from 45 it is 5 points, kept; from 30 it is 20, changed.
	if got := lendable(45, 5, 10); got != 45 {
		t.Errorf("lendable from 45 = %d, want 45", got)
	}
	if got := lendable(30, 5, 10); got != 50 {
		t.Errorf("lendable from 30 = %d, want 50", got)
	}
	// idle 100% is clamped to 90.
	if got := lendable(0, 0, 10); got != 90 {
		t.Errorf("lendable of an idle level = %d, want 90", got)
	}
}

func TestRecommendUnlimitedStep(t *testing.T) {
	a, da := lvl("a", 10, 60, 0)
	b, db := lvl("b", 90, 9, 0)
	a.Bounds.MaxStepPercent, b.Bounds.MaxStepPercent = math.MaxInt32, math.MaxInt32
	// a: u 6, need ceil(10 x 6 / 0.7) - 10 = 86 - 10 = 76 (a 100% step would stop at +10).
	// b: u 0.1, gives 90 - ceil(90 x 0.1 / 0.7) = 90 - 13 = 77. Transfer 76.
	got := shares(Recommend(DefaultConfig(), []Level{a, b}, Window{Levels: map[string]Demand{"a": da, "b": db}}))
	if got["a"] != 86 || got["b"] != 14 {
		t.Errorf("unlimited step: %v, want a 86, b 14", got)
	}
}

func TestWhyNamesTheDroppedMove(t *testing.T) {
	step25 := func(l Level, d Demand) (Level, Demand) { l.Bounds.MaxStepPercent = 25; return l, d }
	// The "MinChangePercent drops a move" case: a was offered +2 of its 40 shares, below 4.
	levels, w := pool(entry(step25(lvl("a", 40, 60, 0))), entry(step25(lvl("b", 10, 2, 0))), entry(step25(lvl("c", 5, 10, 0))))
	why := Recommend(DefaultConfig(), levels, w)["a"].Why
	if !strings.HasSuffix(why, "held: a move of 2 shares is below 10% of 40") {
		t.Errorf("a why = %q", why)
	}
}

// The diurnal simulation's stuck pool (docs/autopilot-simulation.md): b, at 30 shares, is far
// above its seats, a at 71 shares is slack, c is within the band. b asks for
// ceil(30 x 2.06 / 0.7) - 30 = 59 shares, its step is 30 x 25% = 7; a can give
// 71 - ceil(71 x 0.282 / 0.7) = 42, its step 17. The transfer is min(7, 17) = 7, which is
// 9.9% of a's 71 shares: below MinChangePercent. When b rejected requests the move is made
// anyway; when it did not, it is dropped as before (and with it the whole transfer).
func TestRejectionsBypassMinChange(t *testing.T) {
	step25 := func(l Level, d Demand) (Level, Demand) { l.Bounds.MaxStepPercent = 25; return l, d }
	for _, tc := range []struct {
		rejected float64
		a, b     int32
	}{{rejected: 30, a: 64, b: 37}, {rejected: 0, a: 71, b: 30}} {
		levels, w := pool(entry(step25(lvl("a", 71, 20, 0))), entry(step25(lvl("b", 30, 60, tc.rejected))), entry(step25(lvl("c", 19, 13.3, 0))))
		got := shares(Recommend(DefaultConfig(), levels, w))
		if got["a"] != tc.a || got["b"] != tc.b || got["c"] != 19 {
			t.Errorf("b rejecting %v: %v, want a %d, b %d, c 19", tc.rejected, got, tc.a, tc.b)
		}
	}
}

// Reclaim: b (configured 40, holds 30) is under pressure (u 1.5), a (configured 40, holds 60)
// and c (configured 20, holds 20) are within the band (u 0.7): no level is slack. b is owed
// 40 - 30 = 10 and takes them back first, whatever its step (25% of 30 = 7): its configured
// shares are its due. a holds 60 - 40 = 20 above its configured shares and returns 10. b's
// own ask (ceil(30 x 1.5 / 0.7) - 30 = 35, step 7) is covered by the 10 and no level is
// slack: nothing more moves. c holds no more than its configured shares and keeps them. With
// a configured at 60, a lent nothing: nothing moves.
func TestRecommendReclaimsLentShares(t *testing.T) {
	step25 := func(l Level, d Demand) (Level, Demand) { l.Bounds.MaxStepPercent = 25; return l, d }
	for _, tc := range []struct {
		aConfigured, a, b int32
	}{{aConfigured: 40, a: 50, b: 40}, {aConfigured: 60, a: 60, b: 30}} {
		a, da := step25(lvl("a", 60, 42, 0))
		b, db := step25(lvl("b", 30, 45, 0))
		c, dc := step25(lvl("c", 20, 14, 0))
		a.ConfiguredShares, b.ConfiguredShares, c.ConfiguredShares = tc.aConfigured, 40, 20
		recs := Recommend(DefaultConfig(), []Level{a, b, c}, Window{Levels: map[string]Demand{"a": da, "b": db, "c": dc}})
		if got := shares(recs); got["a"] != tc.a || got["b"] != tc.b || got["c"] != 20 {
			t.Errorf("a configured %d: %v, want a %d, b %d, c 20", tc.aConfigured, got, tc.a, tc.b)
		}
		if tc.a != 60 && !strings.Contains(recs["a"].Why, "-10 shares returned to levels under pressure below their configured shares (it holds 60, Git gives it 40)") {
			t.Errorf("a's why = %q", recs["a"].Why)
		}
	}
}
