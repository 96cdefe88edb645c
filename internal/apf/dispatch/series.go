package dispatch

import (
	"context"
	"sync"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/metrics"
)

// The metric series of a (level, schema) pair is deleted once no configuration names it and
// no request of it waits or executes (metrics.Flow counts both; see internal/apf/metrics
// series.go). The dispatcher holds a configuration's flows from plan until the next Update
// has published its successor, and each request's flow from admission until the request's
// last record: its finish, or its rejection. A request holding a deleted flow cannot exist:
// Handle looks its flow up without the lock, so it holds it (holdLocked, handleExempt) and
// looks it up again if the series was deleted meanwhile; only a flow of a schema of an older
// configuration can be, as the current configuration holds its own.

// newConfiguredFlow returns the flow of schema on lv for the configuration being planned,
// holding its series until unconfigure.
func newConfiguredFlow(lv *level, m *metrics.Metrics, schema string, mu *sync.Mutex) *flow {
	return newFlow(lv, m.ConfiguredFlow(lv.name, schema), mu)
}

// newStaleFlow returns the flow of schema, of an older configuration, mapped onto lv: its
// series lives as long as requests hold it.
func newStaleFlow(lv *level, m *metrics.Metrics, schema string, mu *sync.Mutex) *flow {
	return newFlow(lv, m.TransientFlow(lv.name, schema), mu)
}

// unconfigure releases the series of a configuration that is no longer in force, and deletes
// those of its stale flows that no request holds. The caller does not hold d.mu.
func (d *Dispatcher) unconfigure(c *config) {
	if c == nil || d.metrics == nil {
		return
	}
	for i := range c.flows.slots {
		if sl := &c.flows.slots[i]; sl.schema != nil {
			d.metrics.Unconfigured(sl.flow.metrics)
		}
	}
	c.stale.Range(func(_, v any) bool {
		d.metrics.DeleteIfUnused(v.(*flow).metrics)
		return true
	})
}

// pruneStale forgets the stale flows whose series were deleted, so that the cache holds no
// more than the stale flows requests still hold.
func (c *config) pruneStale() {
	c.stale.Range(func(k, v any) bool {
		if v.(*flow).metrics.Deleted() {
			c.stale.CompareAndDelete(k, v)
		}
		return true
	})
}

// holdLocked holds f's series for a request of schema s, looking the schema up again while the
// series it found was deleted.
func (d *Dispatcher) holdLocked(f *flow, s *effective.Schema) *flow {
	for !f.holdLocked() {
		f = d.cfg.flowFor(s)
	}
	return f
}

func (f *flow) holdLocked() bool {
	if f.guarded {
		return f.metrics.HoldGuarded()
	}
	return f.metrics.Hold()
}

// releaseSeriesLocked releases a request's hold on f's series after its last record, deleting the
// series if nothing else holds it. It reports whether the caller must still call
// deleteIfUnused after unlocking d.mu (f's series is guarded by another dispatcher's lock).
func (d *Dispatcher) releaseSeriesLocked(f *flow) (deleteAfterUnlock bool) {
	if !f.guarded {
		return f.metrics.Release()
	}
	if f.metrics.ReleaseGuarded() {
		d.metrics.DeleteIfUnusedGuarded(f.metrics)
	}
	return false
}

// releaseSeries is releaseSeriesLocked for a caller that does not hold d.mu.
func (d *Dispatcher) releaseSeries(f *flow) {
	if !f.guarded {
		d.deleteIfUnused(f, f.metrics.Release())
		return
	}
	d.lock()
	d.releaseSeriesLocked(f)
	d.unlock()
}

// deleteIfUnused deletes f's series if nothing holds it, when do says so; the caller does not
// hold d.mu.
func (d *Dispatcher) deleteIfUnused(f *flow, do bool) {
	if do {
		d.metrics.DeleteIfUnused(f.metrics)
	}
}

// handleExempt runs a request of the exempt level, holding its series without the lock.
func (d *Dispatcher) handleExempt(ctx context.Context, r *Request, f *flow, exec func()) Outcome {
	if !f.metrics.Hold() {
		return d.Handle(ctx, r, exec) // the series was deleted since the lookup: look again
	}
	defer func() { d.deleteIfUnused(f, f.metrics.Release()) }()
	d.runExempt(f, exec)
	return Executed
}
