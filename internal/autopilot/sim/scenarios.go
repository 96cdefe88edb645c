package sim

import (
	"math"
	"time"

	"github.com/apf-operator/apf-operator/internal/autopilot"
)

// The simulated server: a small SCL and second-long requests keep the number of events (and
// the table's computation) small; what matters to the autopilot is demand relative to seats.
const (
	simSCL       = 75
	simWaitLimit = 15 * time.Second
	simWindow    = time.Minute
	simDuration  = 2 * time.Hour
	simOnceAfter = time.Hour
)

// tenantBounds are every tenant level's autopilot bounds (configured shares 40).
var tenantBounds = autopilot.Bounds{MinShares: 10, MaxShares: 80, MaxStepPercent: 25}

// standIns returns the levels outside the pool: stand-ins for kube-apiserver's bootstrap
// system, leader-election and workload-high levels with their shares and lendable percents,
// under a light steady load.
func standIns() []LevelSpec {
	return []LevelSpec{
		{Name: "system", PriorityLevel: 100, Shares: 30, LendablePercent: i32(33),
			Rate: Constant(0.75), Peak: 0.75, MeanService: 2 * time.Second, Flows: 8},
		{Name: "leader-election", PriorityLevel: 200, Shares: 10, LendablePercent: i32(0),
			Rate: Constant(0.25), Peak: 0.25, MeanService: time.Second, Flows: 4},
		{Name: "workload-high", PriorityLevel: 300, Shares: 40, LendablePercent: i32(50),
			Rate: Constant(1), Peak: 1, MeanService: 4 * time.Second, Flows: 16},
	}
}

// tenant returns a pool level: 40 configured shares, lending and borrowing nothing, so its
// nominal seats are exactly what it can use (the static policy; the others make it lend with
// lending, see docs/autopilot-simulation.md).
func tenant(name string, level int32, rate Rate, peak float64) LevelSpec {
	b := tenantBounds
	return LevelSpec{Name: name, PriorityLevel: level, Shares: 40, LendablePercent: i32(0),
		BorrowingLimitPercent: i32(0), Autopilot: &b, Rate: rate, Peak: peak,
		MeanService: 4 * time.Second, Flows: 16}
}

func scenario(name, description string, seed uint64, tenants ...LevelSpec) Scenario {
	return Scenario{Name: name, Description: description, Seed: seed, ServerConcurrencyLimit: simSCL,
		WaitLimit: simWaitLimit, Duration: simDuration, Window: simWindow, OnceAfter: simOnceAfter,
		Levels: append(standIns(), tenants...)}
}

// Scenarios returns the documented scenarios. A tenant's seat demand is its rate times the 4 s
// mean service time: 0.4 requests/s keep 1.6 seats busy on average, of its 10 nominal seats.
func Scenarios() []Scenario {
	return []Scenario{
		scenario("diurnal", "tenant-a and tenant-b follow one-hour sine cycles in antiphase (1.6 ± 1.2 requests/s of 4 s each: 1.6 to 11.2 busy seats), tenant-c is steady (0.4/s)", 1,
			tenant("tenant-a", 400, Sine(1.6, 1.2, time.Hour, 0), 2.8),
			tenant("tenant-b", 410, Sine(1.6, 1.2, time.Hour, math.Pi), 2.8),
			tenant("tenant-c", 420, Constant(0.4), 0.4)),
		scenario("growing tenant", "tenant-b grows linearly from 1 to 3.5 requests/s (of 4 s each: 4 to 14 busy seats) over the two hours; tenant-a (0.5/s) and tenant-c (0.4/s) are steady", 2,
			tenant("tenant-a", 400, Constant(0.5), 0.5),
			tenant("tenant-b", 410, Linear(1, 3.5, simDuration), 3.5),
			tenant("tenant-c", 420, Constant(0.4), 0.4)),
		scenario("burst", "tenant-c jumps from 0.8 to 4 requests/s (5x, of 4 s each: 16 busy seats) for 10 minutes from 75 min; tenant-a (0.5/s) and tenant-b (0.4/s) are steady", 3,
			tenant("tenant-a", 400, Constant(0.5), 0.5),
			tenant("tenant-b", 410, Constant(0.4), 0.4),
			tenant("tenant-c", 420, Burst(0.8, 5, 75*time.Minute, 10*time.Minute), 4)),
	}
}

// AdversarialScenarios returns the scenarios built to make the closed loop lose (issue #34):
// demand moving faster than it confirms, a tenant waking after lending its shares away for
// an hour, a pool with no slack anywhere, a tenant flooding to take shares.
func AdversarialScenarios() []Scenario {
	return []Scenario{
		scenario("flip", "tenant-a and tenant-b swap every 3 minutes between 3.5 requests/s (of 4 s each: 14 busy seats) and 0.25/s (1 seat), faster than the loop confirms a change; tenant-c is steady (0.4/s)", 4,
			tenant("tenant-a", 400, Square(3.5, 0.25, 6*time.Minute, false), 3.5),
			tenant("tenant-b", 410, Square(3.5, 0.25, 6*time.Minute, true), 3.5),
			tenant("tenant-c", 420, Constant(0.4), 0.4)),
		scenario("idle wakes", "tenant-c sends nothing for an hour, then 2.5 requests/s (of 4 s each: 10 busy seats, its nominal seats); tenant-a is over its seats throughout (3/s: 12 busy seats), tenant-b steady (1/s)", 5,
			tenant("tenant-a", 400, Constant(3), 3),
			tenant("tenant-b", 410, Constant(1), 1),
			tenant("tenant-c", 420, Step(0, 2.5, time.Hour), 2.5)),
		scenario("saturated", "every tenant sends 3 requests/s (of 4 s each: 12 busy seats, over its 10) throughout: nothing to move", 6,
			tenant("tenant-a", 400, Constant(3), 3),
			tenant("tenant-b", 410, Constant(3), 3),
			tenant("tenant-c", 420, Constant(3), 3)),
		scenario("flood", "tenant-a floods at 6 requests/s (of 4 s each: 24 busy seats) throughout; tenant-b sends 1/s (4 seats) for an hour, then 2.5/s (10 seats, its nominal seats); tenant-c is steady (0.4/s)", 7,
			tenant("tenant-a", 400, Constant(6), 6),
			tenant("tenant-b", 410, Step(1, 2.5, time.Hour), 2.5),
			tenant("tenant-c", 420, Constant(0.4), 0.4)),
	}
}

// AllScenarios returns the documented scenarios, then the adversarial ones: the table's.
func AllScenarios() []Scenario { return append(Scenarios(), AdversarialScenarios()...) }

// TenantLendablePercent is the lendablePercent of the pool's levels under the policies that
// lend (kube-apiserver's workload-high and global-default levels lend 50%); they borrow
// without limit.
const TenantLendablePercent = 50

// lending returns a copy of sc whose pool levels lend TenantLendablePercent and borrow
// without limit.
func lending(sc *Scenario) *Scenario {
	out := *sc
	out.Levels = append([]LevelSpec(nil), sc.Levels...)
	for i := range out.Levels {
		if out.Levels[i].Autopilot != nil {
			out.Levels[i].LendablePercent, out.Levels[i].BorrowingLimitPercent = i32(TenantLendablePercent), nil
		}
	}
	return &out
}
