package autopilot_test

import (
	"fmt"
	"math"

	"github.com/apf-operator/apf-operator/internal/autopilot"
)

// The worked example of docs/autopilot.md: kube-apiserver with 600 seats, its own Limited
// levels holding 245 shares, and a pool of three levels (40 + 40 + 20 shares).
func ExampleRecommend() {
	nominal := func(shares int32) float64 { return math.Ceil(600 * float64(shares) / 345) }
	levels := []autopilot.Level{
		{Name: "tenant-a", Shares: 40, ConfiguredShares: 40, Bounds: autopilot.Bounds{MinShares: 10, MaxShares: 80}},
		{Name: "tenant-b", Shares: 40, ConfiguredShares: 40, Bounds: autopilot.Bounds{MinShares: 10, MaxShares: 80}},
		{Name: "batch", Shares: 20, ConfiguredShares: 20, Bounds: autopilot.Bounds{MinShares: 5, MaxShares: 40}},
	}
	w := autopilot.Window{Levels: map[string]autopilot.Demand{
		"tenant-a": {NominalSeats: nominal(40), Seats: 80, Peak: 95, Dispatched: 4000, Rejected: 120},
		"tenant-b": {NominalSeats: nominal(40), Seats: 30, Peak: 41, Dispatched: 9000},
		"batch":    {NominalSeats: nominal(20), Seats: 25, Peak: 33, Dispatched: 500},
	}}
	recs := autopilot.Recommend(autopilot.DefaultConfig(), levels, w)
	for _, name := range []string{"tenant-a", "tenant-b", "batch"} {
		r := recs[name]
		fmt.Printf("%s: %d -> %d shares: %s\n", name, r.Level.Shares, r.Shares, r.Why)
	}
	// Output:
	// tenant-a: 40 -> 50 shares: under pressure: demand p95 80.0 seats, 82.4 counting the 120 rejected of 4120, on 70 nominal (utilisation 1.18); +10 shares for utilisation 0.94
	// tenant-b: 40 -> 30 shares: slack: demand p95 30.0 seats on 70 nominal (utilisation 0.43); -10 shares for utilisation 0.57
	// batch: 20 -> 20 shares: within the band 0.50-0.90: demand p95 25.0 seats on 35 nominal (utilisation 0.71); held
}
