package controllers

import (
	"cmp"
	"sync"
	"sync/atomic"
	"time"
)

// userQuiet is how long no RequestPriority or FlowSchema must have changed before the
// operator reports what may be only the order of a sync: a new FlowSchema's missing
// RequestPriority (snapshot.deferred). A GitOps sync applies its
// objects in any order, so a FlowSchema often arrives before the RequestPriority it names; a
// reference still missing once the sync has been quiet this long is a real error, reported
// then. It delays the report of a real typo by this much; it is longer than the pauses of a
// sync on a loaded machine (a few seconds) and short beside a person's reaction time.
const userQuiet = 10 * time.Second

// quietPeriods overrides userQuiet and snapshotQuiet. Production leaves it zero; the
// in-package envtest suite shortens both, so that each step of a test does not wait the
// production pauses (the unit tests of the burst logic keep the constants).
type quietPeriods struct {
	// user replaces userQuiet, snapshot replaces snapshotQuiet, when positive.
	user, snapshot time.Duration
}

func (q quietPeriods) userOrDefault() time.Duration     { return cmp.Or(q.user, userQuiet) }
func (q quietPeriods) snapshotOrDefault() time.Duration { return cmp.Or(q.snapshot, snapshotQuiet) }

// changeClock records when the users' objects (RequestPriorities, FlowSchemas) last changed:
// their creation, deletion or a new generation. Changes of native objects, which the
// operator's own projection causes, do not count; neither do status writes. Safe for
// concurrent use.
type changeClock struct {
	// quiet shortens the quiet periods for in-package tests (Options.quiet); zero values are
	// production's userQuiet and snapshotQuiet.
	quiet quietPeriods

	mu sync.Mutex
	// last is the latest change; busySince is the first change after the last quiet period.
	last, busySince time.Time
}

// record notes a change at now.
func (c *changeClock) record(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.last) >= c.quiet.userOrDefault() {
		c.busySince = now
	}
	if now.After(c.last) {
		c.last = now
	}
}

// quietLeft is how long until the users' objects will have been quiet for userQuiet, if
// nothing else changes; 0 once they have been, and once changes have gone on without such a
// pause for firstStatusDeferral (endless churn must not keep statuses unwritten).
func (c *changeClock) quietLeft(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last.IsZero() || now.Sub(c.busySince) >= firstStatusDeferral {
		return 0
	}
	return max(0, c.quiet.userOrDefault()-now.Sub(c.last))
}

// quietAfter reports whether the users' objects changed after since, and when they will have
// been quiet for snapshotQuiet.
func (c *changeClock) quietAfter(since time.Time) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last.Add(c.quiet.snapshotOrDefault()), c.last.After(since)
}

// changedWithin reports whether the users' objects changed in the window before now.
func (c *changeClock) changedWithin(now time.Time, window time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.last.IsZero() && now.Sub(c.last) < window
}

// projectorProgressWindow is how recent the projector's last successful native write must be
// for it to count as making progress (projectionWait).
const projectorProgressWindow = 10 * time.Second

// progressClock records when the projector last wrote a native object. Safe for concurrent use.
type progressClock struct {
	last atomic.Int64 // unix nanoseconds; 0: never
}

// record notes a successful native write at now.
func (p *progressClock) record(now time.Time) { p.last.Store(now.UnixNano()) }

// progressing reports whether the projector wrote a native object in the projectorProgressWindow
// before now.
func (p *progressClock) progressing(now time.Time) bool {
	last := p.last.Load()
	return last != 0 && now.Sub(time.Unix(0, last)) < projectorProgressWindow
}
