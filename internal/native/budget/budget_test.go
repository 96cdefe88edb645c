package budget_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/internal/native/budget"
)

// TestStockCluster: kube-apiserver's own levels hold 245 shares, so at 10% the operator's
// levels may hold 27 shares (272 keeps 245/272 = 90.07%; 28 would leave 89.7%).
func TestStockCluster(t *testing.T) {
	b := budget.New(nil, 10, 0)
	if !b.Bootstrap || b.KeptShares != 245 || b.MaxShares != 27 {
		t.Fatalf("bootstrap budget: bootstrap %v, K %d, max %d; want true, 245, 27", b.Bootstrap, b.KeptShares, b.MaxShares)
	}
	if !b.Fits(27) || b.Fits(28) {
		t.Errorf("Fits(27) = %v, Fits(28) = %v; want true, false", b.Fits(27), b.Fits(28))
	}
	for _, c := range []struct {
		p    int32
		want int64
	}{{0, 0}, {1, 2}, {10, 27}, {50, 245}, {90, 2205}, {100, 2205}, {-5, 0}} {
		if got := budget.New(nil, c.p, 0).MaxShares; got != c.want {
			t.Errorf("p=%d: max %d shares, want %d", c.p, got, c.want)
		}
	}
}

// TestEveryLevelKeepsItsShare checks the rule against its definition for many K and p.
func TestEveryLevelKeepsItsShare(t *testing.T) {
	for k := int64(1); k < 600; k += 7 {
		for p := int32(0); p <= 90; p += 3 {
			a := budget.ShareRule(k, p)
			if 100*k < int64(100-p)*(k+a) {
				t.Fatalf("K=%d p=%d: A=%d leaves %d/%d, below %d%%", k, p, a, k, k+a, 100-p)
			}
			if 100*k >= int64(100-p)*(k+a+1) {
				t.Fatalf("K=%d p=%d: A=%d is not the largest (A+1 still fits)", k, p, a)
			}
		}
	}
}

// TestRoundedSeats: with a known server concurrency limit the budget also keeps every level's
// rounded-up seats. At SCL 150 leader-election has ceil(150×10/245) = 7 seats; 27 more shares
// leave it ceil(1500/272) = 6 (86%), so the budget is 4 (ceil(1500/249) = 7); at SCL 600 every
// level keeps 90% of its seats with 27.
func TestRoundedSeats(t *testing.T) {
	for _, c := range []struct {
		scl  int64
		want int64
	}{{150, 4}, {600, 27}, {60, 12}} {
		b := budget.New(nil, 10, c.scl)
		if b.MaxShares != c.want {
			t.Errorf("SCL %d: max %d shares, want %d", c.scl, b.MaxShares, c.want)
		}
		if e := b.Explain(); c.want < 27 && !strings.Contains(e, fmt.Sprintf("= 27 shares together, and with kube-apiserver's %d seats rounded up per level %d", c.scl, c.want)) {
			t.Errorf("SCL %d: Explain = %s", c.scl, e)
		}
		for _, l := range b.Kept {
			before := budget.Seats(c.scl, int64(l.Shares), 245)
			after := budget.Seats(c.scl, int64(l.Shares), 245+b.MaxShares)
			if 10*after < 9*before {
				t.Errorf("SCL %d: %s keeps %d of %d seats", c.scl, l.Name, after, before)
			}
		}
	}
	if got := budget.Seats(150, 10, 245); got != 7 {
		t.Errorf("Seats(150, 10, 245) = %d, want 7", got)
	}
}

func TestClusterLevels(t *testing.T) {
	kept := []budget.Level{{Name: "exempt"}, {Name: "system", Shares: 30}, {Name: "catch-all", Shares: 5}, {Name: "eks", Shares: 65}}
	b := budget.New(kept, 10, 0)
	if b.Bootstrap || b.KeptShares != 100 || b.MaxShares != 11 {
		t.Fatalf("budget: bootstrap %v, K %d, max %d; want false, 100, 11", b.Bootstrap, b.KeptShares, b.MaxShares)
	}
	got := b.Describe(100000)
	want := "catch-all: 5 of 100100 shares, 0.00% of the server instead of 5.0%; eks: 65 of 100100 shares, " +
		"0.06% of the server instead of 65.0%; system: 30 of 100100 shares, 0.03% of the server instead of 30.0%"
	if got != want {
		t.Errorf("Describe:\n got %s\nwant %s", got, want)
	}
	if e := b.Explain(); !strings.Contains(e, "floor(100×10/90) = 11") {
		t.Errorf("Explain = %s", e)
	}
	// Kept levels of no shares (only exempt) have no seats to lose: no bound.
	if b := budget.New([]budget.Level{{Name: "exempt"}}, 10, 150); !b.Fits(100000) {
		t.Errorf("kept levels without shares: max %d shares, want no bound", b.MaxShares)
	}
}
