package autopilot

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// randomPool is a pool of 1 to 12 levels with random shares, bounds, demand and rejections;
// some levels have no measurement.
func randomPool(rng *rand.Rand) ([]Level, Window) {
	n := 1 + rng.IntN(12)
	w := Window{Levels: map[string]Demand{}}
	levels := make([]Level, n)
	for i := range levels {
		shares := int32(1 + rng.IntN(200))
		minS := int32(1 + rng.IntN(int(shares)))
		maxS := shares + int32(rng.IntN(300))
		if rng.IntN(4) == 0 {
			maxS = 0 // unbounded
		}
		levels[i] = Level{Name: fmt.Sprintf("l%02d", i), Shares: shares, ConfiguredShares: shares,
			Bounds: Bounds{MinShares: minS, MaxShares: maxS, MaxStepPercent: int32(rng.IntN(101))}}
		if rng.IntN(2) == 0 { // the loop moved it away from Git's shares
			levels[i].ConfiguredShares = int32(1 + rng.IntN(200))
		}
		if rng.IntN(8) == 0 {
			continue
		}
		nominal := math.Max(1, float64(shares)*(0.5+rng.Float64()))
		d := Demand{NominalSeats: nominal, Seats: nominal * 2.5 * rng.Float64(), Dispatched: float64(rng.IntN(10000))}
		if rng.IntN(3) == 0 {
			d.Rejected = float64(rng.IntN(5000))
		}
		d.Peak = d.Seats * (1 + rng.Float64())
		w.Levels[levels[i].Name] = d
	}
	return levels, w
}

func TestRecommendProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 26))
	cfgs := []Config{DefaultConfig(), func() Config { c := DefaultConfig(); c.MinChangePercent = 0; return c }()}
	moved, returned := 0, 0
	for iter := range 5000 {
		levels, w := randomPool(rng)
		cfg := cfgs[iter%len(cfgs)]
		recs := Recommend(cfg, levels, w)
		var before, after int64
		for _, l := range levels {
			r, ok := recs[l.Name]
			if !ok {
				t.Fatalf("pool %d: no recommendation for %s", iter, l.Name)
			}
			before, after = before+int64(l.Shares), after+int64(r.Shares)
			checkLevel(t, cfg, iter, l, w, r, relieved(levels, w, recs))
			if r.Shares != l.Shares {
				moved++
			}
			if r.Shares < l.Shares && r.Utilisation >= cfg.LowWater {
				returned++
			}
		}
		if before != after {
			t.Fatalf("pool %d: shares %d became %d", iter, before, after)
		}
	}
	// The property must have been exercised: many levels did move.
	if moved < 1000 || returned < 50 {
		t.Errorf("only %d levels moved in 5000 pools, %d of them returning lent shares from within the band", moved, returned)
	}
}

// relieved reports whether the recommendations give shares to a level that rejected requests
// (then no move is too small).
func relieved(levels []Level, w Window, recs map[string]Recommendation) bool {
	for _, l := range levels {
		if recs[l.Name].Shares > l.Shares && w.Levels[l.Name].Rejected > 0 {
			return true
		}
	}
	return false
}

// checkLevel checks one level's recommendation against its bounds, step, band and the
// smallest change (unless the transfer relieves rejections).
func checkLevel(t *testing.T, cfg Config, iter int, l Level, w Window, r Recommendation, relieves bool) {
	t.Helper()
	move := r.Shares - l.Shares
	if move == 0 {
		return
	}
	d, measured := w.Levels[l.Name]
	if !measured {
		t.Fatalf("pool %d: unmeasured %s moved by %d", iter, l.Name, move)
	}
	// Beyond its step, a level moves only towards its configured shares (reclaim).
	if m := abs32(move); m > step(cfg, l)+towardsConfigured(l, move) {
		t.Fatalf("pool %d: %s moved %d, more than its step %d and its way back to its configured %d", iter, l.Name, move, step(cfg, l), l.ConfiguredShares)
	}
	if move > 0 && l.Bounds.MaxShares > 0 && r.Shares > l.Bounds.MaxShares {
		t.Fatalf("pool %d: %s raised to %d above max %d", iter, l.Name, r.Shares, l.Bounds.MaxShares)
	}
	if move < 0 && r.Shares < max(l.Bounds.MinShares, 1) {
		t.Fatalf("pool %d: %s lowered to %d below min %d", iter, l.Name, r.Shares, l.Bounds.MinShares)
	}
	if !relieves && tooSmall(cfg, l.Shares, move) {
		t.Fatalf("pool %d: %s moved %d, below %v%% of %d", iter, l.Name, move, cfg.MinChangePercent, l.Shares)
	}
	pressured := r.Utilisation > cfg.HighWater || d.Rejected > 0
	slack := r.Utilisation < cfg.LowWater && d.Rejected == 0
	// A level that is not slack gives only what it holds above its configured shares.
	returns := !slack && r.Shares >= l.ConfiguredShares
	if (move > 0 && !pressured) || (move < 0 && !slack && !returns) {
		t.Fatalf("pool %d: %s moved %d at utilisation %.3f with %v rejected", iter, l.Name, move, r.Utilisation, d.Rejected)
	}
	// A slack level never gives below the shares its demand needs at the target, unless it
	// returns what it holds above its configured shares.
	if move < 0 && slack && r.Shares < l.ConfiguredShares && float64(r.Shares) < float64(l.Shares)*r.Utilisation/cfg.TargetUtilisation-1e-9 {
		t.Fatalf("pool %d: %s gave down to %d, below its need at the target", iter, l.Name, r.Shares)
	}
}

func TestRecommendBadMeasurementsHold(t *testing.T) {
	for _, seats := range []float64{math.NaN(), math.Inf(1), -3} {
		a, da := lvl("a", 10, seats, 0)
		b, db := lvl("b", 10, 18, 0)
		recs := Recommend(DefaultConfig(), []Level{a, b}, Window{Levels: map[string]Demand{"a": da, "b": db}})
		if recs["a"].Shares != 10 || recs["b"].Shares != 10 {
			t.Errorf("seats %v: %v, want both held", seats, shares(recs))
		}
	}
}

// BenchmarkRecommend100 sizes a pool of 100 levels, half under pressure, half slack.
func BenchmarkRecommend100(b *testing.B) {
	var levels []Level
	w := Window{Levels: map[string]Demand{}}
	for i := range 100 {
		l, d := lvl(fmt.Sprintf("level-%03d", i), int32(10+i), 0, 0)
		d.Seats = d.NominalSeats * 0.2
		if i%2 == 0 {
			d.Seats = d.NominalSeats * 1.5
		}
		levels = append(levels, l)
		w.Levels[l.Name] = d
	}
	b.ReportAllocs()
	for b.Loop() {
		Recommend(DefaultConfig(), levels, w)
	}
}

// towardsConfigured is how far a move in its direction may take the level back towards its
// configured shares.
func towardsConfigured(l Level, move int32) int32 {
	switch {
	case move > 0 && l.Shares < l.ConfiguredShares:
		return l.ConfiguredShares - l.Shares
	case move < 0 && l.Shares > l.ConfiguredShares:
		return l.Shares - l.ConfiguredShares
	}
	return 0
}
