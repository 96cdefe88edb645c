package dispatch

import (
	"math"
	"testing"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

func percent(v int32) *int32 { return &v }

// TestLevelLimitsRounding: minCL and maxCL round half away from zero, as kube-apiserver's
// apf_controller does (math.Round), and a nil borrowing limit allows the whole SCL.
func TestLevelLimitsRounding(t *testing.T) {
	for _, c := range []struct {
		ncl          int
		lend         int32
		borrow       *int32
		minCL, maxCL int
	}{
		{ncl: 10, lend: 0, borrow: nil, minCL: 10, maxCL: 600},
		{ncl: 10, lend: 100, borrow: percent(0), minCL: 0, maxCL: 10},
		{ncl: 5, lend: 10, borrow: percent(10), minCL: 4, maxCL: 6},   // 0.5 rounds up
		{ncl: 5, lend: 50, borrow: percent(50), minCL: 2, maxCL: 8},   // 2.5 rounds up
		{ncl: 10, lend: 33, borrow: percent(33), minCL: 7, maxCL: 13}, // 3.3 rounds down
		{ncl: 10, lend: 35, borrow: percent(35), minCL: 6, maxCL: 14}, // 3.5 rounds up
		{ncl: 3, lend: 49, borrow: percent(149), minCL: 2, maxCL: 7},  // 1.47 and 4.47
		{ncl: 1, lend: 50, borrow: percent(50), minCL: 0, maxCL: 2},
		{ncl: 1, lend: 49, borrow: percent(1_000_000), minCL: 1, maxCL: 10_001},
		{ncl: 0, lend: 50, borrow: percent(50), minCL: 0, maxCL: 0},
		{ncl: 10, lend: -1, borrow: nil, minCL: 0, maxCL: 600}, // absent: lends every idle seat
	} {
		p := &effective.Priority{Level: 100, LendablePercent: c.lend, BorrowingLimitPercent: c.borrow}
		if c.lend < 0 {
			p.LendablePercent, p.LendableAbsent = 0, true
		}
		if minCL, maxCL := levelLimits(c.ncl, p, 600); minCL != c.minCL || maxCL != c.maxCL {
			t.Errorf("ncl %d lend %d%% borrow %v: minCL %d maxCL %d, want %d and %d",
				c.ncl, c.lend, c.borrow, minCL, maxCL, c.minCL, c.maxCL)
		}
	}
}

// TestLevelLimitsMatchUpstreamFormula compares the integer arithmetic with kube-apiserver's
// float formula over every percentage and nominal limits up to 1000.
func TestLevelLimitsMatchUpstreamFormula(t *testing.T) {
	for ncl := 0; ncl <= 1000; ncl++ {
		for pct := int32(0); pct <= 300; pct++ {
			lend := min(pct, 100)
			p := &effective.Priority{Level: 100, LendablePercent: lend, BorrowingLimitPercent: percent(pct)}
			wantMin := ncl - int(math.Round(float64(ncl)*float64(lend)/100))
			wantMax := ncl + int(math.Round(float64(ncl)*float64(pct)/100))
			if minCL, maxCL := levelLimits(ncl, p, 5000); minCL != wantMin || maxCL != wantMax {
				t.Fatalf("ncl %d, %d%%: minCL %d maxCL %d, upstream %d and %d", ncl, pct, minCL, maxCL, wantMin, wantMax)
			}
		}
	}
}
