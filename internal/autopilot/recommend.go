package autopilot

import (
	"math"
	"sort"
	"time"
)

// DefaultConfig is the documented configuration (docs/autopilot.md).
func DefaultConfig() Config {
	return Config{
		Quantile:              0.95,
		TargetUtilisation:     0.7,
		HighWater:             0.9,
		LowWater:              0.5,
		MinChangePercent:      10,
		Confirmations:         2,
		MinWindow:             15 * time.Second,
		MaxRejectionInflation: 4,
		SpikeRejections:       50,
		SpikeFactor:           2,
		Freeze:                30 * time.Minute,
		DefaultMaxStepPercent: 25,
	}
}

// Recommend sizes every level of the pool from one window: levels under pressure gain the
// shares that bring them to Config.TargetUtilisation, taken from slack levels without taking
// them below theirs, or returned to them by levels within the band holding more than their
// configured shares while they hold less than theirs; the pool's total shares do not change;
// per-level bounds and step limits hold. Levels missing from the window are held. It does not keep state: the loop adds
// confirmation and rollback.
func Recommend(cfg Config, levels []Level, w Window) map[string]Recommendation {
	return recommend(cfg, assessAll(cfg, levels, w), nil)
}

// assessAll assesses every level, sorted by name.
func assessAll(cfg Config, levels []Level, w Window) []assessment {
	sorted := append([]Level(nil), levels...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	assessed := make([]assessment, len(sorted))
	for i, l := range sorted {
		assessed[i] = assess(cfg, l, w)
	}
	return assessed
}

// recommend makes the pool's transfer between the assessed levels, the levels in held (not
// yet confirmed by the loop) taking no part in it.
func recommend(cfg Config, assessed []assessment, held map[string]bool) map[string]Recommendation {
	assessed = append([]assessment(nil), assessed...)
	for i := range assessed {
		if held[assessed[i].level.Name] {
			assessed[i].amount, assessed[i].deficit = 0, 0 // it still owes what it holds above its due
		}
	}
	moves, dropped := transfer(cfg, assessed)
	out := make(map[string]Recommendation, len(assessed))
	for i, a := range assessed {
		a.dropped = dropped[i]
		out[a.level.Name] = a.recommendation(cfg, moves[i])
	}
	return out
}

// asks is the direction each level asks to move on its own measurement (pressured or slack
// with shares to gain or give), whatever the rest of the pool can do: what the loop confirms.
func asks(assessed []assessment) map[string]Direction {
	out := map[string]Direction{}
	for _, a := range assessed {
		switch {
		case a.band == pressured && (a.amount > 0 || a.deficit > 0):
			out[a.level.Name] = Up
		case a.band == slack && a.amount > 0:
			out[a.level.Name] = Down
		}
	}
	return out
}

// band is where a level's utilisation puts it.
type band int

const (
	unmeasured band = iota
	inBand
	pressured
	slack
)

// assessment is one level's measurement and what it asks for, before the pool's transfer.
type assessment struct {
	level    Level
	demand   Demand
	measured bool
	// seats is the demand inflated by rejections; util is seats over nominal seats.
	seats, util float64
	band        band
	// want is the shares a pressured level needs or a slack level can give (before caps);
	// amount is want after the step and the bounds.
	want, amount int32
	// deficit is what a pressured level lacks of its configured shares (within its maxShares);
	// excess is what any measured level holds above its configured shares (down to its
	// minShares): the first returns to the second (reclaim, transfer.go).
	deficit, excess int32
	// dropped is the move the transfer offered and dropped as below MinChangePercent.
	dropped int32
}

// assess measures one level and computes what it asks for.
func assess(cfg Config, l Level, w Window) assessment {
	a := assessment{level: l}
	d, ok := w.Levels[l.Name]
	a.demand = d
	if !ok || !(d.NominalSeats > 0) || !(d.Seats >= 0) || math.IsInf(d.Seats+d.NominalSeats, 0) || l.Shares <= 0 {
		return a // not measured (or not a measurement: NaN, infinite, negative): held
	}
	a.measured = true
	a.seats = d.Seats * inflation(cfg, d)
	a.util = a.seats / d.NominalSeats
	sized := sharesFor(cfg, l.Shares, a.util)
	switch {
	case a.util > cfg.HighWater || d.Rejected > 0:
		a.band = pressured
		a.want = max(sized-l.Shares, 0)
		a.amount = min(a.want, step(cfg, l), headroom(l))
	case a.util < cfg.LowWater:
		a.band = slack
		a.want = max(l.Shares-max(sized, minShares(l)), 0)
		a.amount = min(a.want, step(cfg, l))
	default:
		a.band = inBand
	}
	if l.ConfiguredShares > 0 && l.Shares > l.ConfiguredShares {
		a.excess = max(l.Shares-max(l.ConfiguredShares, minShares(l)), 0)
	}
	if a.band == pressured && l.Shares < l.ConfiguredShares {
		a.deficit = min(l.ConfiguredShares-l.Shares, headroom(l))
	}
	return a
}

// inflation is how much the level's rejected requests scale its measured demand: rejected
// requests never occupied a seat, so demand seen is demand served. 1/(1 - rejected fraction),
// capped at Config.MaxRejectionInflation.
func inflation(cfg Config, d Demand) float64 {
	total := d.Dispatched + d.Rejected
	if d.Rejected <= 0 || total <= 0 {
		return 1
	}
	served := 1 - d.Rejected/total
	capped := math.Max(cfg.MaxRejectionInflation, 1)
	if served <= 1/capped {
		return capped
	}
	return 1 / served
}

// sharesFor is the shares that would put a level at the target utilisation: ceil(shares x
// util / target), at least 1.
func sharesFor(cfg Config, shares int32, util float64) int32 {
	target := cfg.TargetUtilisation
	if target <= 0 {
		target = 1
	}
	v := math.Ceil(float64(shares)*util/target - 1e-9)
	if v > math.MaxInt32/2 {
		return math.MaxInt32 / 2
	}
	return max(int32(v), 1)
}

// step is the most one step may move the level: max(1, shares x maxStepPercent / 100). A
// percent above 100 (the API stops at 100) is honoured: math.MaxInt32 lifts the limit.
func step(cfg Config, l Level) int32 {
	pct := l.Bounds.MaxStepPercent
	if pct <= 0 {
		pct = cfg.DefaultMaxStepPercent
	}
	return int32(min(max(1, int64(l.Shares)*int64(pct)/100), math.MaxInt32/2))
}

// minShares is the level's lower bound, at least 1.
func minShares(l Level) int32 { return max(l.Bounds.MinShares, 1) }

// headroom is how many shares the level may gain before its upper bound.
func headroom(l Level) int32 {
	if l.Bounds.MaxShares <= 0 {
		return math.MaxInt32 / 2
	}
	return max(l.Bounds.MaxShares-l.Shares, 0)
}
