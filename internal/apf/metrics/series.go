package metrics

// The series of a FlowSchema or RequestPriority that left the configuration must leave the
// scrape too, but only once nothing can still update it: a request that waits or executes
// under it will record its dispatch, finish or rejection later. So a managed Flow counts its
// holders, and its series is deleted when it has none:
//
//   - each configuration that names its pair (ConfiguredFlow, released by Unconfigured);
//   - each request in flight, from admission until its last record (Hold, Release, or
//     HoldGuarded and ReleaseGuarded under the guard lock).
//
// Deletion takes the guard lock and the collector's lock, finds no holder, and marks the Flow
// deleted in the same step as it forgets it (heldFree becomes deletedMark), so a Hold racing
// it either comes first and keeps the series, or fails; the caller then asks for the pair's
// Flow again and gets a fresh one, with counters from zero. A deleted Flow is never collected
// again, so nothing recorded late can bring its series back, and its gauges cannot go below
// zero: every request records its whole life on the one Flow it held.

import "math"

// deletedMark is heldFree of a deleted Flow: far below any count of holders.
const deletedMark = math.MinInt64 / 2

// ConfiguredFlow returns the Flow of the pair, as Flow does, held by one more configuration
// until Unconfigured: its series is kept at least that long.
func (m *Metrics) ConfiguredFlow(priorityLevel, flowSchema string) *Flow {
	return m.managedFlow(priorityLevel, flowSchema, true)
}

// TransientFlow returns the Flow of the pair, as Flow does, for a request of a configuration
// that no longer names it: the series is deleted once no request holds it and no
// configuration names it.
func (m *Metrics) TransientFlow(priorityLevel, flowSchema string) *Flow {
	return m.managedFlow(priorityLevel, flowSchema, false)
}

// managedFlow returns the Flow of the pair with its series managed by holds, counting one
// configuration's hold if configured.
func (m *Metrics) managedFlow(priorityLevel, flowSchema string, configured bool) *Flow {
	if m == nil {
		return nil
	}
	c := m.flows
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.getLocked(priorityLevel, flowSchema)
	f.managed = true
	if configured {
		f.configs.Add(1)
	}
	return f
}

// Unconfigured releases the hold of a configuration on f (from ConfiguredFlow) and deletes its
// series if nothing else holds it. The caller must not hold f's guard lock.
func (m *Metrics) Unconfigured(f *Flow) {
	if m == nil || f == nil {
		return
	}
	m.flows.mu.Lock()
	f.configs.Add(-1)
	m.flows.mu.Unlock()
	m.DeleteIfUnused(f)
}

// DeleteIfUnused deletes f's series if f is managed and nothing holds it, and reports whether
// f is deleted. It takes f's guard lock, which the caller must not hold.
func (m *Metrics) DeleteIfUnused(f *Flow) bool {
	if m == nil || f == nil {
		return false
	}
	return m.flows.deleteIfUnused(f)
}

// DeleteIfUnusedGuarded is DeleteIfUnused for a caller that holds f's guard lock, or for a
// Flow without one.
func (m *Metrics) DeleteIfUnusedGuarded(f *Flow) bool {
	if m == nil || f == nil {
		return false
	}
	return m.flows.deleteIfUnusedGuarded(f)
}

func (c *flowCollector) deleteIfUnused(f *Flow) bool {
	if mu := f.guard.Load(); mu != nil {
		mu.Lock()
		defer mu.Unlock()
	}
	return c.deleteIfUnusedGuarded(f)
}

func (c *flowCollector) deleteIfUnusedGuarded(f *Flow) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !f.managed || f.configs.Load() > 0 || f.held > 0 ||
		!f.heldFree.CompareAndSwap(0, deletedMark) {
		return f.Deleted()
	}
	if k := (flowKey{f.level, f.schema}); c.flows[k] == f {
		delete(c.flows, k)
	}
	return true
}

// Deleted reports whether f's series was deleted: f records nothing visible any more, and the
// pair's next Flow starts from zero. A nil Flow is never deleted.
func (f *Flow) Deleted() bool { return f != nil && f.heldFree.Load() < 0 }

// Hold counts one more request in flight on f, without a lock. It returns false if f was
// deleted; the caller then asks for the pair's Flow again.
func (f *Flow) Hold() bool {
	if f == nil {
		return true
	}
	for {
		n := f.heldFree.Load()
		if n < 0 {
			return false
		}
		if f.heldFree.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release ends a hold taken by Hold, after the request's last record. It reports whether f may
// now be unused; the caller then calls DeleteIfUnused.
func (f *Flow) Release() bool {
	return f != nil && f.heldFree.Add(-1) == 0 && f.configs.Load() == 0
}

// HoldGuarded is Hold for a caller that holds the lock Guard accepted: a plain addition.
func (f *Flow) HoldGuarded() bool {
	if f == nil {
		return true
	}
	if f.heldFree.Load() < 0 {
		return false
	}
	f.held++
	return true
}

// ReleaseGuarded is Release for a hold taken by HoldGuarded, under the same lock; the caller
// then calls DeleteIfUnusedGuarded if it reports true.
func (f *Flow) ReleaseGuarded() bool {
	if f == nil {
		return false
	}
	f.held--
	return f.held == 0 && f.configs.Load() == 0
}

// unused reports whether f is managed and no configuration holds it: a candidate for
// deletion at collection (a Flow made for a request that then took another one, say). The
// caller holds the collector's lock.
func (f *Flow) unused() bool { return f.managed && f.configs.Load() == 0 }
