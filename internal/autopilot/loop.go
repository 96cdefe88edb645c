package autopilot

import (
	"fmt"
	"hash/fnv"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

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
	mem Memory
	// observed counts the complete windows this Loop has seen: the first never changes
	// anything, whatever Config.Confirmations says.
	observed int
	// agreed counts the consecutive complete windows that recommended directions.
	agreed     int
	directions map[string]Direction
	// checking is true from a step until the next complete window, which is compared with
	// rejectedBefore (the pool's rejections in the window that led to the step).
	checking       bool
	rejectedBefore float64
	// pool is the Pool of the configured shares last observed: when Git changes them, what
	// the loop learnt (confirmations, the step to check, the last good shares) no longer holds.
	pool string
}

// NewLoop returns a loop resuming from mem.
func NewLoop(cfg Config, mem Memory) *Loop {
	mem.LastGood = maps.Clone(mem.LastGood)
	return &Loop{cfg: cfg, mem: mem}
}

// Observe takes the window that ended at now, with the levels as they were configured during
// it, and returns the step to apply.
func (l *Loop) Observe(now time.Time, levels []Level, w Window) Step {
	st := Step{Applied: sharesOf(levels)}
	l.notePool(levels)
	if w.Incomplete != "" {
		l.unconfirm()
		st.State, st.Message = v1alpha1.AutopilotWaiting, "metrics incomplete, nothing changed: "+w.Incomplete
		if st.FrozenUntil = l.frozenUntil(now); !st.FrozenUntil.IsZero() {
			st.State = v1alpha1.AutopilotFrozen
			st.Message = l.frozenMessage() + "; " + st.Message
		}
		return st
	}
	l.observed++
	st.Recommended = Recommend(l.cfg, levels, w)
	rejected := poolRejections(levels, w)
	if l.checking {
		l.checking = false
		if l.spike(rejected) {
			return l.rollback(now, st, rejected)
		}
	}
	if now.Before(l.mem.FrozenUntil) {
		l.unconfirm()
		st.State, st.Message = v1alpha1.AutopilotFrozen, l.frozenMessage()
		st.FrozenUntil = l.mem.FrozenUntil
		return st
	}
	return l.decide(now, st, rejected)
}

// decide confirms the window's recommendation and applies it once enough windows agree.
func (l *Loop) decide(now time.Time, st Step, rejected float64) Step {
	dirs := directionsOf(st.Recommended)
	if len(dirs) == 0 {
		l.unconfirm()
		st.State, st.Message = v1alpha1.AutopilotHolding, "the applied shares fit the measured demand"
		return st
	}
	if maps.Equal(dirs, l.directions) {
		l.agreed++
	} else {
		l.agreed, l.directions = 1, dirs
	}
	need := max(l.cfg.Confirmations, 1)
	if l.agreed < need || l.observed < 2 {
		st.State = v1alpha1.AutopilotConfirming
		st.Message = fmt.Sprintf("%d of %d windows agree on %s", l.agreed, need, describe(dirs))
		if l.observed < 2 && l.agreed >= need {
			st.Message = "first window since the loop started: " + describe(dirs) + " waits for a second"
		}
		return st
	}
	l.unconfirm()
	l.mem.LastGood = maps.Clone(st.Applied)
	l.mem.LastChange = now
	l.checking, l.rejectedBefore = true, rejected
	for name, r := range st.Recommended {
		st.Applied[name] = r.Shares
	}
	st.Changed = true
	st.State = v1alpha1.AutopilotApplied
	st.Message = fmt.Sprintf("applied after %d agreeing windows: %s", need, describe(dirs))
	return st
}

// notePool forgets what belonged to another pool when the configured shares changed.
func (l *Loop) notePool(levels []Level) {
	configured := make(map[string]int32, len(levels))
	for _, lv := range levels {
		configured[lv.Name] = lv.ConfiguredShares
	}
	p := Pool(configured)
	if l.pool != "" && p != l.pool {
		l.unconfirm()
		l.checking = false
		l.mem.LastGood = nil
	}
	l.pool = p
}

// spike reports whether the pool's rejections after a step are a spike it may have caused.
func (l *Loop) spike(rejected float64) bool {
	return rejected > l.cfg.SpikeRejections && rejected > l.cfg.SpikeFactor*l.rejectedBefore
}

// rollback restores the last good shares and freezes the loop.
func (l *Loop) rollback(now time.Time, st Step, rejected float64) Step {
	l.unconfirm()
	for name, v := range l.mem.LastGood {
		if cur, ok := st.Applied[name]; ok && cur != v {
			st.Applied[name] = v
			st.Changed = true
		}
	}
	st.RolledBack = true
	if st.Changed {
		l.mem.LastChange = now
	}
	l.mem.FrozenUntil = now.Add(l.cfg.Freeze)
	st.FrozenUntil = l.mem.FrozenUntil
	st.State = v1alpha1.AutopilotFrozen
	st.Message = fmt.Sprintf("rejection spike after the last step (%.0f rejected in the pool, %.0f in the window before it): last good shares restored, frozen until %s",
		rejected, l.rejectedBefore, st.FrozenUntil.UTC().Format(time.RFC3339))
	return st
}

// frozenMessage says until when the loop is frozen.
func (l *Loop) frozenMessage() string {
	return fmt.Sprintf("frozen until %s after a rejection spike", l.mem.FrozenUntil.UTC().Format(time.RFC3339))
}

// frozenUntil is the freeze's end while it lasts, else zero.
func (l *Loop) frozenUntil(now time.Time) time.Time {
	if now.Before(l.mem.FrozenUntil) {
		return l.mem.FrozenUntil
	}
	return time.Time{}
}

// unconfirm forgets the agreeing windows.
func (l *Loop) unconfirm() { l.agreed, l.directions = 0, nil }

// Memory returns the state to persist after a step.
func (l *Loop) Memory() Memory {
	m := l.mem
	m.LastGood = maps.Clone(m.LastGood)
	return m
}

// Pool identifies the configured shares of the pool's levels (by RequestPriority name): the
// applied shares recorded under one Pool are valid only while Pool is unchanged.
func Pool(configured map[string]int32) string {
	lines := make([]string, 0, len(configured))
	for name, v := range configured {
		lines = append(lines, fmt.Sprintf("%s=%d\n", name, v))
	}
	sort.Strings(lines)
	h := fnv.New64a()
	for _, line := range lines {
		h.Write([]byte(line))
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// sharesOf is the shares in force, by level name.
func sharesOf(levels []Level) map[string]int32 {
	out := make(map[string]int32, len(levels))
	for _, l := range levels {
		out[l.Name] = l.Shares
	}
	return out
}

// poolRejections sums the pool's rejected requests in the window.
func poolRejections(levels []Level, w Window) float64 {
	var sum float64
	for _, l := range levels {
		sum += w.Levels[l.Name].Rejected
	}
	return sum
}

// directionsOf is the direction of every level a recommendation moves.
func directionsOf(recs map[string]Recommendation) map[string]Direction {
	out := map[string]Direction{}
	for name, r := range recs {
		if r.Direction != Hold {
			out[name] = r.Direction
		}
	}
	return out
}

// describe lists moves as "+a -b" sorted by name.
func describe(dirs map[string]Direction) string {
	names := make([]string, 0, len(dirs))
	for name := range dirs {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		sign := "+"
		if dirs[name] == Down {
			sign = "-"
		}
		parts[i] = sign + name
	}
	return strings.Join(parts, " ")
}
