package autopilot

import (
	"fmt"
	"math"
)

// recommendation is the level's Recommendation after the pool moved it by move shares.
func (a assessment) recommendation(cfg Config, move int32) Recommendation {
	l := a.level
	r := Recommendation{Level: l, Demand: a.demand, Utilisation: a.util, Shares: l.Shares + move,
		LendablePercent: l.LendablePercent, BorrowingLimitPercent: l.BorrowingLimitPercent}
	switch {
	case move > 0:
		r.Direction = Up
	case move < 0:
		r.Direction = Down
	}
	if a.measured {
		newNominal := a.demand.NominalSeats * float64(r.Shares) / float64(l.Shares)
		r.LendablePercent = lendable(l.LendablePercent, a.seats, newNominal)
		r.BorrowingLimitPercent = borrowingLimit(l.BorrowingLimitPercent, a.demand.Peak, newNominal)
	}
	r.Why = a.why(cfg, move)
	return r
}

// lendable is the share of newNominal seats idle Config.Quantile of the time, floored to a
// multiple of 5, within 0..90; the current value when the new one is less than 10 points away.
func lendable(current int32, seats, newNominal float64) int32 {
	if newNominal <= 0 {
		return current
	}
	idle := 100 * (1 - seats/newNominal)
	v := int32(math.Floor(idle/5+1e-9)) * 5
	v = min(max(v, 0), 90)
	if d := v - current; d < 10 && d > -10 {
		return current
	}
	return v
}

// borrowingLimit is the percent of newNominal the level must borrow to hold its peak, ceiled
// to a multiple of 10, when the current limit (nil: unlimited) is below it; else the current.
func borrowingLimit(current *int32, peak, newNominal float64) *int32 {
	if current == nil || newNominal <= 0 || peak <= newNominal {
		return current
	}
	v := int32(math.Ceil(100*(peak/newNominal-1)/10-1e-9)) * 10
	if *current >= v {
		return current
	}
	return &v
}

// why says in one sentence what the level's figures are and what they led to.
func (a assessment) why(cfg Config, move int32) string {
	if !a.measured {
		return "no demand measured for the level in the window: held"
	}
	fig := a.figures(cfg)
	switch {
	case move > 0:
		return fmt.Sprintf("under pressure: %s; +%d shares for utilisation %.2f", fig, move, a.after(move))
	case move < 0 && a.band != slack:
		return fmt.Sprintf("%s: %s; %d shares returned to levels under pressure below their configured shares (it holds %d, Git gives it %d)",
			a.bandName(cfg), fig, move, a.level.Shares, a.level.ConfiguredShares)
	case move < 0:
		return fmt.Sprintf("slack: %s; %d shares for utilisation %.2f", fig, move, a.after(move))
	}
	switch a.band {
	case pressured:
		return "under pressure: " + fig + "; held: " + a.heldBecause(cfg, "no slack level could give shares")
	case slack:
		return "slack: " + fig + "; held: " + a.heldBecause(cfg, "no level under pressure needed shares")
	}
	return fmt.Sprintf("within the band %.2f-%.2f: %s; held", cfg.LowWater, cfg.HighWater, fig)
}

// figures are the demand figures behind a recommendation.
func (a assessment) figures(cfg Config) string {
	d, q := a.demand, trim(cfg.Quantile*100)
	if d.Rejected > 0 { // a.seats counts the rejected requests' demand too
		return fmt.Sprintf("demand p%s %.1f seats, %.1f counting the %s rejected of %s, on %s nominal (utilisation %.2f)",
			q, d.Seats, a.seats, trim(d.Rejected), trim(d.Dispatched+d.Rejected), trim(d.NominalSeats), a.util)
	}
	return fmt.Sprintf("demand p%s %.1f seats on %s nominal (utilisation %.2f)", q, a.seats, trim(d.NominalSeats), a.util)
}

// heldBecause says why a level outside the band did not move.
func (a assessment) heldBecause(cfg Config, otherwise string) string {
	l := a.level
	switch {
	case a.want == 0 && a.band == pressured:
		return fmt.Sprintf("its demand fits its %d shares at utilisation %.2f", l.Shares, cfg.TargetUtilisation)
	case a.want == 0:
		return fmt.Sprintf("giving a share would take it below its minimum of %d shares or above utilisation %.2f", minShares(l), cfg.TargetUtilisation)
	case a.amount == 0 && a.band == pressured:
		return fmt.Sprintf("at its maxShares %d", l.Bounds.MaxShares)
	case a.dropped != 0:
		return fmt.Sprintf("a move of %d shares is below %s%% of %d", abs32(a.dropped), trim(cfg.MinChangePercent), l.Shares)
	}
	return otherwise
}

// after is the utilisation the level would have with move more shares.
func (a assessment) after(move int32) float64 {
	return a.util * float64(a.level.Shares) / float64(a.level.Shares+move)
}

// trim prints a figure without useless decimals (310, 12.4).
func trim(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func abs32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

// bandName names the level's band in a why.
func (a assessment) bandName(cfg Config) string {
	if a.band == pressured {
		return "under pressure"
	}
	return fmt.Sprintf("within the band %.2f-%.2f", cfg.LowWater, cfg.HighWater)
}
