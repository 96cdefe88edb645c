package sim

import (
	"testing"
	"time"
)

// TestBorrowingFollowsDemand checks the model of kube-apiserver's borrowing: an idle level
// keeps only its unlendable seats, a busy one borrows the rest; when the idle one wakes, it
// gets its nominal seats back at the next adjustment (its high watermark), not before.
func TestBorrowingFollowsDemand(t *testing.T) {
	b := &borrowing{scl: 40, levels: []*borrowLevel{
		{name: "busy", nominal: 10, minCL: 5, maxCL: 50, current: 10, scenarioIndex: 0},
		{name: "idle", nominal: 10, minCL: 5, maxCL: 50, current: 10, scenarioIndex: 1},
	}}
	b.integrate(borrowPeriod, []int{20, 0})
	b.adjust([]int{20, 0})
	if busy, idle := b.levels[0].current, b.levels[1].current; busy != 15 || idle != 5 {
		t.Fatalf("busy %d idle %d, want 15 and 5", busy, idle)
	}
	b.integrate(time.Second, []int{20, 8})
	if idle := b.levels[1].current; idle != 5 {
		t.Fatalf("the idle level's limit changed between adjustments: %d", idle)
	}
	b.integrate(borrowPeriod-time.Second, []int{20, 8})
	b.adjust([]int{20, 8})
	if busy, idle := b.levels[0].current, b.levels[1].current; idle < 8 || busy+idle != 20 {
		t.Fatalf("after waking: busy %d idle %d, want idle at least 8 and a sum of 20", busy, idle)
	}
}
