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

// Loop is the closed loop: it turns a sequence of windows into steps, moving a level only
// after Config.Confirmations consecutive windows in which it asked for the same direction
// (a step in between does not reset the count: the window after it is a new measurement),
// one step per window, and rolling back to the last good shares (then freezing) on a
// rejection spike after a step. A new Loop (a new leader) starts unconfirmed, so it changes
// nothing in its first windows.
type Loop struct {
	cfg Config
	mem Memory
	// observed counts the complete windows this Loop has seen: the first never changes
	// anything, whatever Config.Confirmations says.
	observed int
	// asked is the direction each level asked for in the last complete window, agreed how
	// many consecutive complete windows it has asked for it: a level's move is confirmed, and
	// takes part in the transfer, once agreed reaches Config.Confirmations.
	asked  map[string]Direction
	agreed map[string]int
	// checking is true from a step until the next complete window, whose rejections at the
	// step's donors (the levels it lowered) are compared with rejectedBefore, theirs in the
	// window that led to the step. Only a donor can be hurt by a step: a level it raised
	// rejects more only because its demand grew, which a rollback would make worse.
	checking       bool
	donors         []string
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
	assessed := assessAll(l.cfg, levels, w)
	st.Recommended = recommend(l.cfg, assessed, nil)
	if l.checking {
		l.checking = false
		if rejected := rejectionsOf(l.donors, w); l.spike(rejected) {
			return l.rollback(now, st, rejected)
		}
	}
	if now.Before(l.mem.FrozenUntil) {
		l.unconfirm()
		st.State, st.Message = v1alpha1.AutopilotFrozen, l.frozenMessage()
		st.FrozenUntil = l.mem.FrozenUntil
		return st
	}
	return l.decide(now, st, assessed, w)
}

// decide confirms each level's ask and applies the transfer between the confirmed levels
// (and the levels above their configured shares returning them); unconfirmed askers are held out of
// it. Confirming per level,
// not the whole pool's set of moves, keeps a third level that enters or leaves the band from
// resetting the confirmation of the two that need to trade.
func (l *Loop) decide(now time.Time, st Step, assessed []assessment, w Window) Step {
	asked := asks(assessed)
	l.confirm(asked)
	if len(asked) == 0 {
		st.State, st.Message = v1alpha1.AutopilotHolding, "the applied shares fit the measured demand"
		return st
	}
	if !anyUp(asked) { // only slack levels: nobody to give to (they stay confirmed for when one is)
		st.State, st.Message = v1alpha1.AutopilotHolding, "no level under pressure; slack: "+describe(asked)
		return st
	}
	need := max(l.cfg.Confirmations, 1)
	held := map[string]bool{}
	for _, a := range assessed {
		if _, asks := asked[a.level.Name]; asks && (l.agreed[a.level.Name] < need || l.observed < 2) {
			held[a.level.Name] = true
		}
	}
	recs := recommend(l.cfg, assessed, held)
	moved := directionsOf(recs)
	if len(moved) == 0 {
		st.State, st.Message = l.confirming(asked, need)
		return st
	}
	l.mem.LastGood = maps.Clone(st.Applied)
	l.mem.LastChange = now
	l.donors = l.donors[:0]
	for name, r := range recs {
		if r.Shares < st.Applied[name] && below(r) {
			l.donors = append(l.donors, name)
		}
		st.Applied[name] = r.Shares
	}
	sort.Strings(l.donors)
	l.checking, l.rejectedBefore = true, rejectionsOf(l.donors, w)
	st.Changed = true
	st.State = v1alpha1.AutopilotApplied
	st.Message = fmt.Sprintf("applied after %d agreeing windows: %s", need, describe(moved))
	return st
}

// below reports whether the recommendation leaves its level below its configured shares (or
// they are unknown): only such a donor can be hurt by a step, and roll it back. A level that
// returned what it held above its configured shares is at its due: its rejections after it,
// a flood's, must not give them back to it.
func below(r Recommendation) bool {
	return r.Level.ConfiguredShares <= 0 || r.Shares < r.Level.ConfiguredShares
}

// anyUp reports whether a level asks for more shares.
func anyUp(asked map[string]Direction) bool {
	for _, d := range asked {
		if d == Up {
			return true
		}
	}
	return false
}

// confirm counts, per level, the consecutive windows asking for the same direction.
func (l *Loop) confirm(asked map[string]Direction) {
	agreed := make(map[string]int, len(asked))
	for name, d := range asked {
		agreed[name] = 1
		if l.asked[name] == d {
			agreed[name] = l.agreed[name] + 1
		}
	}
	l.asked, l.agreed = asked, agreed
}

// confirming is the state and message when no confirmed level moved: some asks wait for
// more windows, or the confirmed ones cannot trade (no confirmed level on the other side, or
// the transfer was below MinChangePercent).
func (l *Loop) confirming(asked map[string]Direction, need int) (string, string) {
	if l.observed < 2 {
		return v1alpha1.AutopilotConfirming, "first window since the loop started: " + describe(asked) + " waits for a second"
	}
	least := need
	for name := range asked {
		least = min(least, l.agreed[name])
	}
	if least >= need {
		return v1alpha1.AutopilotHolding, "no move between the confirmed levels: " + describe(asked) + " (see each level's why)"
	}
	return v1alpha1.AutopilotConfirming, fmt.Sprintf("%d of %d windows agree on %s", least, need, describe(asked))
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

// spike reports whether the donors' rejections after a step are a spike it may have caused.
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
	st.Message = fmt.Sprintf("rejection spike after the last step at the levels it lowered (%s: %.0f rejected, %.0f in the window before it): last good shares restored, frozen until %s",
		strings.Join(l.donors, ", "), rejected, l.rejectedBefore, st.FrozenUntil.UTC().Format(time.RFC3339))
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
func (l *Loop) unconfirm() { l.asked, l.agreed = nil, nil }

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

// rejectionsOf sums the rejected requests of the named levels in the window.
func rejectionsOf(names []string, w Window) float64 {
	var sum float64
	for _, name := range names {
		sum += w.Levels[name].Rejected
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
