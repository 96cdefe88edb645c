package autopilot

import "time"

// Memory is the loop's state that must survive a leader change; the operator keeps it in the
// RequestPriorities' status.autopilot.
type Memory struct {
	// LastGood are the shares before the last step, by level name.
	LastGood map[string]int32
	// LastChange is when the applied shares last changed; FrozenUntil when a freeze ends.
	LastChange, FrozenUntil time.Time
}

// Loop is the closed loop: it turns a sequence of windows into steps, applying a
// recommendation only after Config.Confirmations agreeing windows, one step per window, and
// rolling back to the last good shares (then freezing) on a rejection spike after a step. A
// new Loop (a new leader) starts unconfirmed, so it changes nothing in its first windows.
type Loop struct {
	cfg Config
}

// NewLoop returns a loop resuming from mem.
func NewLoop(cfg Config, mem Memory) *Loop {
	panic("TODO(core)")
}

// Observe takes the window that ended at now, with the levels as they were configured during
// it, and returns the step to apply.
func (l *Loop) Observe(now time.Time, levels []Level, w Window) Step {
	panic("TODO(core)")
}

// Memory returns the state to persist after a step.
func (l *Loop) Memory() Memory {
	panic("TODO(core)")
}

// Pool identifies the configured shares of the pool's levels (by RequestPriority name): the
// applied shares recorded under one Pool are valid only while Pool is unchanged.
func Pool(configured map[string]int32) string {
	panic("TODO(core)")
}
