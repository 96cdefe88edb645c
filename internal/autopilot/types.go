package autopilot

import "time"

// Config tunes the recommender and the loop. DefaultConfig gives the documented values; a zero
// field is not replaced by its default.
type Config struct {
	// Quantile is the quantile of a level's time-weighted seat demand taken as what it needs
	// (0.95: the seats it could use 95% of the window).
	Quantile float64
	// TargetUtilisation is the demand / nominal seats a resized level is sized for.
	TargetUtilisation float64
	// HighWater and LowWater bound the dead band: a level is under pressure above HighWater
	// (or when it rejected requests), slack below LowWater, and left alone between them.
	HighWater, LowWater float64
	// MinChangePercent is the smallest change of a level's shares worth making, in percent.
	MinChangePercent float64
	// Confirmations is how many consecutive complete windows must recommend a change in the
	// same direction before the loop applies it.
	Confirmations int
	// MinWindow is the shortest window whose measurements count.
	MinWindow time.Duration
	// MaxRejectionInflation caps how much rejected requests inflate a level's demand.
	MaxRejectionInflation float64
	// SpikeRejections and SpikeFactor define a rejection spike after a step: the pool's
	// rejections in the window after it exceed both SpikeRejections and SpikeFactor times
	// those of the window before it.
	SpikeRejections float64
	SpikeFactor     float64
	// Freeze is how long the loop changes nothing after rolling back a spike.
	Freeze time.Duration
	// DefaultMaxStepPercent is the step bound of a level whose Bounds leave it 0.
	DefaultMaxStepPercent int32
}

// Bounds are one level's limits (RequestPriority spec.autopilot); a zero MaxShares means
// unbounded above, a zero MaxStepPercent means Config.DefaultMaxStepPercent. MaxStepPercent is
// not capped at 100 here: math.MaxInt32 means no step limit (what `recommend` uses for
// levels without spec.autopilot; a step of 100% only doubles a level).
type Bounds struct {
	MinShares, MaxShares int32
	MaxStepPercent       int32
}

// Level is one priority level of the pool as it was configured during a window.
type Level struct {
	// Name is the native PriorityLevelConfiguration's name (the metrics' priority_level).
	Name string
	// Object is the RequestPriority the level is projected from ("" when not the operator's).
	Object string
	// Shares are the nominal shares in force during the window (applied, not configured).
	Shares int32
	// ConfiguredShares are the shares Git gives the level (spec.assuredConcurrencyShares).
	ConfiguredShares int32
	// LendablePercent and BorrowingLimitPercent are the level's (nil: no borrowing limit).
	LendablePercent       int32
	BorrowingLimitPercent *int32
	Bounds                Bounds
}

// Demand is what kube-apiserver measured of one level over a window.
type Demand struct {
	// NominalSeats are the level's nominal seats at the window's end.
	NominalSeats float64
	// Seats is the Config.Quantile of the level's time-weighted seat demand (executing plus
	// queued seats), in seats; Peak the highest seat demand seen (high watermark).
	Seats, Peak float64
	// Dispatched and Rejected count the level's requests in the window.
	Dispatched, Rejected float64
	// WaitP99 is the 99th percentile of queue wait in seconds; WaitKnown is false without
	// observations.
	WaitP99   float64
	WaitKnown bool
}

// Window is the measurements of every level over one interval.
type Window struct {
	Start, End time.Time
	Levels     map[string]Demand
	// Incomplete, when not empty, says why the window must not drive a change (a level's
	// series missing, a counter reset, too short, a replica missing).
	Incomplete string
}

// Direction is which way a recommendation moves a level.
type Direction int

// Directions of a recommendation.
const (
	Hold Direction = iota
	Up
	Down
)

// Recommendation is what one window says of one level.
type Recommendation struct {
	Level  Level
	Demand Demand
	// Utilisation is Demand.Seats (inflated by rejections) over Demand.NominalSeats.
	Utilisation float64
	Direction   Direction
	// Shares, LendablePercent and BorrowingLimitPercent are the recommended values.
	Shares                int32
	LendablePercent       int32
	BorrowingLimitPercent *int32
	// Why says in one sentence why, with the figures behind it.
	Why string
}

// Step is what the loop decided at the end of one window.
type Step struct {
	// Applied are the shares to apply now, by level name (every pool level).
	Applied map[string]int32
	// Recommended are this window's recommendations, by level name (nil when incomplete).
	Recommended map[string]Recommendation
	// Changed is true when Applied differs from the shares in force.
	Changed bool
	// RolledBack is true when Applied are the last good shares after a rejection spike.
	RolledBack bool
	// State is one of the v1alpha1 Autopilot* states; Message why.
	State   string
	Message string
	// FrozenUntil is set while a freeze lasts.
	FrozenUntil time.Time
}
