package sim

import (
	"math"
	"time"

	"github.com/apf-operator/apf-operator/internal/autopilot"
)

// Rate is a level's arrival rate, in requests per virtual second, at the virtual time t since
// the start of a run.
type Rate func(t time.Duration) float64

// LevelSpec is one simulated priority level: a RequestPriority with a FlowSchema that takes
// its requests, and the demand offered to it.
type LevelSpec struct {
	// Name names the RequestPriority, its FlowSchema and the level.
	Name string
	// PriorityLevel is spec.priorityLevel (unique; lower is higher priority).
	PriorityLevel int32
	// Shares are the configured (Git) assured concurrency shares.
	Shares int32
	// LendablePercent and BorrowingLimitPercent are the level's (nil: absent).
	LendablePercent, BorrowingLimitPercent *int32
	// Autopilot, when set, puts the level in the autopilot's pool with these bounds.
	Autopilot *autopilot.Bounds
	// Rate is the offered arrival rate; Peak is an upper bound of Rate over the run (arrivals
	// are drawn at Peak and thinned).
	Rate Rate
	Peak float64
	// MeanService is the mean of the lognormal service time.
	MeanService time.Duration
	// Flows is how many users (flows, by the FlowSchema's user distinguisher) send the
	// level's requests, round robin.
	Flows int
}

// Scenario is one simulated run's setting: levels, demand and durations.
type Scenario struct {
	Name string
	// Description says in one sentence what the demand does.
	Description string
	// Seed seeds every random stream of the run (one PCG stream per level).
	Seed uint64
	// ServerConcurrencyLimit is the engine's SCL, in seats.
	ServerConcurrencyLimit int
	// WaitLimit is the longest a request waits in a queue.
	WaitLimit time.Duration
	// Duration is the virtual length of the run; Window the length of one measurement window
	// (one autopilot.Window, one loop step at most).
	Duration, Window time.Duration
	// OnceAfter is when the recommend-once policy applies its one recommendation, computed
	// from one window covering [0, OnceAfter).
	OnceAfter time.Duration
	Levels    []LevelSpec
}

func i32(v int32) *int32 { return &v }

// Constant returns a constant rate.
func Constant(r float64) Rate { return func(time.Duration) float64 { return r } }

// Sine returns mean + amplitude*sin(2*pi*t/period + phase): a diurnal cycle compressed to period.
func Sine(mean, amplitude float64, period time.Duration, phase float64) Rate {
	return func(t time.Duration) float64 {
		return math.Max(0, mean+amplitude*math.Sin(2*math.Pi*t.Seconds()/period.Seconds()+phase))
	}
}

// Linear returns a rate growing linearly from start to end over d, then staying at end.
func Linear(start, end float64, d time.Duration) Rate {
	return func(t time.Duration) float64 {
		f := math.Min(1, t.Seconds()/d.Seconds())
		return start + (end-start)*f
	}
}

// Burst returns base, multiplied by factor from at for length.
func Burst(base, factor float64, at, length time.Duration) Rate {
	return func(t time.Duration) float64 {
		if t >= at && t < at+length {
			return base * factor
		}
		return base
	}
}

// Square returns high for the first half of every period and low for the second; shifted by
// half a period when inverted.
func Square(high, low float64, period time.Duration, inverted bool) Rate {
	return func(t time.Duration) float64 {
		first := t%period < period/2
		if first != inverted {
			return high
		}
		return low
	}
}

// Step returns before until at, then after.
func Step(before, after float64, at time.Duration) Rate {
	return func(t time.Duration) float64 {
		if t < at {
			return before
		}
		return after
	}
}
