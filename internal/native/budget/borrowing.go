package budget

import (
	"fmt"
	"math"
)

// Borrowing. kube-apiserver lets a Limited level run up to maxCL = nominalCL + borrowingCL seats,
// borrowingCL = round(nominalCL × borrowingLimitPercent / 100), or nominalCL + SCL when
// borrowingLimitPercent is absent; it lends at most lendableCL = round(nominalCL ×
// lendablePercent / 100) of a level's own seats, and every 10 s it shares the server's seats
// out between the levels within [minCL, maxCL] (k8s.io/apiserver
// pkg/util/flowcontrol/apf_controller.go, finishQueueSetReconfigsLocked and
// updateBorrowingLocked). The operator's levels together therefore never hold more than
// Σ (nominalCL + borrowingCL) seats, so the seats they borrow from the levels the operator does
// not own are at most B = Σ borrowingCL (and at most what those levels lend).
//
// The borrowing rule: B ≤ floor(p × L / 100), where L = Σ lendableCL of the kept levels, in
// seats when SCL is known (kube-apiserver's own rounding, with the operator's levels' shares in
// the sum); otherwise the same rule in shares: Σ shares × borrowingLimitPercent ≤ p% of
// Σ shares × lendablePercent of the kept levels. So the kept levels lose at most p % of the
// seats they lend to the operator's borrowing, while they are idle enough to lend them. When
// the kept levels lend nothing (L = 0) the operator's levels cannot borrow from them at all,
// and the rule has no bound.

// DefaultBorrowingLimitPercent is the borrowingLimitPercent of a projected level whose
// RequestPriority leaves it absent (kube-apiserver's absent is "no limit": nominalCL + SCL).
// kube-apiserver's suggested levels set no borrowing limit; they lend 25 to 90 % of their seats,
// 50 % for the median (workload-high and global-default). 50 is also the largest whole
// percent at which the default budget on a stock cluster (27 shares at p = 10) passes the
// borrowing rule: 27 × 50 = 1350 ≤ 10 % of the suggested levels' 13990 lendable
// share-percent.
const DefaultBorrowingLimitPercent = 50

// Ask is what one of the operator's levels asks of kube-apiserver: its nominal shares and its
// borrowing limit in percent of its nominal seats.
type Ask struct {
	Name                  string
	Shares                int32
	BorrowingLimitPercent int32
}

// Borrowing is the borrowing rule applied to the operator's levels.
type Borrowing struct {
	// Seats is true when the figures are seats (SCL known), false when share-percent.
	Seats bool
	// Taken is B: what the operator's levels may borrow together.
	Taken int64
	// Lendable is L: what the kept levels lend.
	Lendable int64
	// Limit is floor(p × L / 100); math.MaxInt64 when L is 0 (no bound).
	Limit int64
}

// Fits reports whether the operator's levels borrow within the rule.
func (bw Borrowing) Fits() bool { return bw.Taken <= bw.Limit }

// Borrowing computes the rule for asks, the operator's levels together.
func (b Budget) Borrowing(asks []Ask) Borrowing {
	var bw Borrowing
	if b.ServerConcurrencyLimit > 0 {
		bw = b.borrowingSeats(asks)
	} else {
		bw.Lendable = b.KeptLendable
		for _, a := range asks {
			bw.Taken += int64(max(a.Shares, 0)) * int64(max(a.BorrowingLimitPercent, 0))
		}
	}
	bw.Limit = math.MaxInt64
	if bw.Lendable > 0 {
		bw.Limit = int64(b.MaxLossPercent) * bw.Lendable / 100
	}
	return bw
}

// borrowingSeats is the rule in kube-apiserver's seats, the operator's levels' shares counted in
// the sum of shares.
func (b Budget) borrowingSeats(asks []Ask) Borrowing {
	sum := b.KeptShares
	for _, a := range asks {
		sum += int64(max(a.Shares, 0))
	}
	bw := Borrowing{Seats: true}
	for _, l := range b.Kept {
		bw.Lendable += PercentOf(Seats(b.ServerConcurrencyLimit, int64(l.Shares), sum), l.LendablePercent)
	}
	for _, a := range asks {
		bw.Taken += PercentOf(Seats(b.ServerConcurrencyLimit, int64(a.Shares), sum), a.BorrowingLimitPercent)
	}
	return bw
}

// PercentOf is kube-apiserver's round(seats × percent / 100) (math.Round: halves away from 0).
func PercentOf(seats int64, percent int32) int64 {
	return int64(math.Round(float64(seats) * float64(max(percent, 0)) / 100))
}

// MaxBorrowingLimitPercent is the largest borrowing limit, at most asks[i]'s own, that asks[i]
// may have with the other asks unchanged; -1 when even 0 does not fit.
func (b Budget) MaxBorrowingLimitPercent(asks []Ask, i int) int32 {
	try := append([]Ask(nil), asks...)
	fits := func(p int32) bool {
		try[i].BorrowingLimitPercent = p
		return b.Borrowing(try).Fits()
	}
	if !fits(0) {
		return -1
	}
	lo, hi := int32(0), max(asks[i].BorrowingLimitPercent, 0)
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// Explain is the arithmetic of the borrowing rule, for messages.
func (bw Borrowing) Explain(p int32) string {
	if bw.Lendable == 0 {
		return "the levels the operator does not own lend nothing, so the operator's levels cannot borrow from them: no bound"
	}
	if bw.Seats {
		return fmt.Sprintf("the levels the operator does not own lend %d seats (Σ round(nominal seats × lendablePercent / 100)); "+
			"the operator's levels may borrow at most %d%% of them, floor(%d×%d/100) = %d seats (Σ round(nominal seats × "+
			"borrowingLimitPercent / 100)), and would borrow %d", bw.Lendable, p, p, bw.Lendable, bw.Limit, bw.Taken)
	}
	return fmt.Sprintf("the levels the operator does not own lend Σ shares × lendablePercent = %d share-percent; the "+
		"operator's levels may borrow at most %d%% of it, floor(%d×%d/100) = %d share-percent (Σ shares × "+
		"borrowingLimitPercent), and would borrow %d", bw.Lendable, p, p, bw.Lendable, bw.Limit, bw.Taken)
}
