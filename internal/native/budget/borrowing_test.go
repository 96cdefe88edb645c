package budget_test

import (
	"testing"

	"github.com/apf-operator/apf-operator/internal/native/budget"
)

// TestKubeRounding: lendable and borrowing seats are kube-apiserver's
// round(nominal × percent / 100), halves away from zero.
func TestKubeRounding(t *testing.T) {
	for _, c := range []struct {
		seats   int64
		percent int32
		want    int64
	}{{89, 50, 45}, {45, 50, 23}, {67, 33, 22}, {221, 90, 199}, {3, 50, 2}, {1, 49, 0}, {10, -5, 0}} {
		if got := budget.PercentOf(c.seats, c.percent); got != c.want {
			t.Errorf("PercentOf(%d, %d) = %d, want %d", c.seats, c.percent, got, c.want)
		}
	}
}

// TestStockLending: kube-apiserver's suggested levels lend 13990 share-percent; at SCL 600 with
// 27 shares of the operator's, kube-apiserver gives them system 67, node-high 89, workload-high
// 89, workload-low 221, global-default 45 nominal seats, of which they lend 22 + 22 + 45 + 199 +
// 23 = 311.
func TestStockLending(t *testing.T) {
	b := budget.New(nil, 10, 0)
	if b.KeptLendable != 13990 {
		t.Errorf("stock lendable %d share-percent, want 13990", b.KeptLendable)
	}
	tenant := []budget.Ask{{Name: "tenant", Shares: 27, BorrowingLimitPercent: 50}}
	bw := budget.New(nil, 10, 600).Borrowing(tenant)
	if !bw.Seats || bw.Lendable != 311 || bw.Limit != 31 || bw.Taken != 30 || !bw.Fits() {
		t.Errorf("SCL 600: %+v, want seats, lendable 311, limit 31, taken round(60×50%%) = 30, fits", bw)
	}
}

// TestDefaultFitsTheDefaultBudget: the default borrowing limit is consistent with the default
// share budget: one level holding the whole default budget at the default borrowing limit
// passes the borrowing rule on a stock cluster, in shares and in seats at several SCLs. (Many
// small levels may not: each borrows at least one seat once rounded, see the projector.)
func TestDefaultFitsTheDefaultBudget(t *testing.T) {
	for _, scl := range []int64{0, 90, 150, 600, 3000} {
		b := budget.New(nil, budget.DefaultMaxLossPercent, scl)
		asks := []budget.Ask{{Shares: int32(b.MaxShares), BorrowingLimitPercent: budget.DefaultBorrowingLimitPercent}}
		if bw := b.Borrowing(asks); b.MaxShares == 0 || !bw.Fits() {
			t.Errorf("SCL %d, %d shares at the default borrowing limit: %+v does not fit", scl, b.MaxShares, bw)
		}
	}
}

// TestMaxBorrowingLimitPercent finds the largest limit that fits, and -1 when none does.
func TestMaxBorrowingLimitPercent(t *testing.T) {
	b := budget.New(nil, 10, 0) // 1399 share-percent
	asks := []budget.Ask{{Shares: 20, BorrowingLimitPercent: 40}, {Shares: 10, BorrowingLimitPercent: 1000}}
	if got := b.MaxBorrowingLimitPercent(asks, 1); got != 59 { // 800 + 10 × 59 = 1390
		t.Errorf("most for the second: %d, want 59", got)
	}
	asks[0].BorrowingLimitPercent = 70 // 1400 alone
	if got := b.MaxBorrowingLimitPercent(asks, 1); got != -1 {
		t.Errorf("most for the second when the first is over alone: %d, want -1", got)
	}
	if got := b.MaxBorrowingLimitPercent(asks[1:], 0); got != 139 {
		t.Errorf("most for 10 shares alone: %d, want 139", got)
	}
}
