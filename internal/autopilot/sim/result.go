package sim

import "time"

// LevelResult is one level's outcome over a run.
type LevelResult struct {
	Name string
	// Pool is true for a level in the autopilot's pool.
	Pool bool
	// Dispatched and Rejected count the requests that arrived during the run.
	Dispatched, Rejected int
	// WaitP99 is the 99th percentile of the time in queue of every request (a request
	// rejected at once waited 0; one timed out waited the wait limit).
	WaitP99 time.Duration
	// ConfiguredShares and FinalShares are a pool level's configured and last applied shares.
	ConfiguredShares, FinalShares int32
	// NominalSeats are the level's nominal seats (ACV) at the end of the run.
	NominalSeats int
}

// Result is one run's outcome.
type Result struct {
	Scenario string
	Policy   Policy
	Levels   []LevelResult
	// Steps counts the windows after which the pool's shares changed, Rollbacks those that
	// rolled a step back, SharesMoved the shares moved up (as many moved down).
	Steps, Rollbacks, SharesMoved int
	// PoolSumKept is true when, at every window's end, the pool's applied shares summed to its
	// configured ones; OtherSeatsKept when every level outside the pool kept its nominal seats.
	PoolSumKept, OtherSeatsKept bool
	// Trace is the closed loop's decision at every window's end (empty for other policies).
	Trace []string

	initialSeats []int
}

// TotalRejected returns the pool levels' rejections (pool true) or every level's.
func (r *Result) TotalRejected(poolOnly bool) int {
	n := 0
	for _, l := range r.Levels {
		if l.Pool || !poolOnly {
			n += l.Rejected
		}
	}
	return n
}
