package dispatch

import "github.com/apf-operator/apf-operator/internal/apf/effective"

// levelLimits returns a non-exempt level's concurrency bounds, as kube-apiserver computes them
// from its nominal limit ncl (here the ACV): minCL = ncl - round(ncl*lendablePercent/100), the
// seats it never lends (none when lendablePercent is absent: the proposal lends every idle
// seat); maxCL = ncl + round(ncl*borrowingLimitPercent/100), the most it may
// use, or scl when borrowingLimitPercent is nil (no limit). Rounding is half away from zero
// (math.Round); the integers are non-negative, so (x*p + 50) / 100 is exact. Out-of-range
// percentages (the effective configuration is validated) are clamped.
func levelLimits(ncl int, p *effective.Priority, scl int) (minCL, maxCL int) {
	lendable := p.LendablePercent
	if p.LendableAbsent {
		lendable = 100 // the proposal: idle seats go to whichever level waits
	}
	minCL = ncl - percentOf(ncl, lendable)
	maxCL = scl
	if p.BorrowingLimitPercent != nil {
		maxCL = ncl + percentOf(ncl, *p.BorrowingLimitPercent)
	}
	return max(minCL, 0), max(maxCL, ncl)
}

// percentOf is round(x * p / 100) for non-negative x and p.
func percentOf(x int, p int32) int {
	return (x*int(max(p, 0)) + 50) / 100
}

// verdict is what a level's limits say about dispatching its head now.
type verdict uint8

const (
	// ineligible: the head needs seats the other levels do not lend even when none of them
	// borrows, or the level is at its borrowing cap. It waits without holding others up.
	ineligible verdict = iota
	// waits: the limits allow the head, but too few seats are free: others' borrowed
	// requests, or unused seats other levels reserve, hold them. No other borrower may
	// overtake it.
	waits
	// borrows: the head fits now, taking seats beyond the level's minCL that no other level
	// reserves.
	borrows
	// ownSeats: the head fits now within the level's own unlendable seats.
	ownSeats
)

// verdictLocked judges a head of width w at level lv (see the package doc, "Borrowing"):
//   - within its own seats (executing+w <= minCL) it needs only w free seats;
//   - otherwise it needs executing+w <= maxCL (a level with nothing executing may exceed its
//     maxCL with one request, as kube-apiserver's queue sets allow) and enough free seats that
//     every other level's unused reserve, max(0, minCL-executing), stays free.
func (d *Dispatcher) verdictLocked(lv *level, w int) verdict {
	free := d.scl - d.executing
	if lv.executing+w <= lv.minCL {
		if w <= free {
			return ownSeats
		}
		return waits // only while the limits are over-committed (see the package doc)
	}
	if lv.executing+w > lv.maxCL && lv.executing > 0 ||
		lv.executing+w+d.minSum-lv.minCL > d.scl {
		return ineligible
	}
	if w+d.reserved-lv.reserve() > free {
		return waits
	}
	return borrows
}

// reserve is the part of the level's unlendable seats it does not use.
func (lv *level) reserve() int { return max(lv.minCL-lv.executing, 0) }

// startedLocked counts a dispatched request's width against its level and the server.
func (d *Dispatcher) startedLocked(lv *level, w int) {
	before := lv.reserve()
	lv.executing += w
	d.executing += w
	d.reserved += lv.reserve() - before
}

// endedLocked releases a finished request's width.
func (d *Dispatcher) endedLocked(lv *level, w int) {
	before := lv.reserve()
	lv.executing -= w
	d.executing -= w
	d.reserved += lv.reserve() - before
}

// setLimitsLocked gives lv new bounds and keeps the dispatcher's sums in step.
func (d *Dispatcher) setLimitsLocked(lv *level, minCL, maxCL int) {
	d.reserved -= lv.reserve()
	d.minSum -= lv.minCL
	lv.minCL, lv.maxCL = minCL, maxCL
	d.reserved += lv.reserve()
	d.minSum += lv.minCL
}
