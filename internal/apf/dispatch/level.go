package dispatch

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/fairqueue"
	"github.com/apf-operator/apf-operator/internal/apf/metrics"
)

// level is the dispatcher's state of one priority level. It lives as long as the level keeps
// its name across configurations, and until its queues drain after it is removed.
type level struct {
	name   string
	exempt bool

	// queueConfig is the configuration of the newest queue set; only Update reads or writes
	// it (under Dispatcher.updateMu).
	queueConfig fairqueue.Config

	// exemptExecuting counts executing requests of an exempt level (they take no lock).
	exemptExecuting atomic.Int64

	// Guarded by Dispatcher.mu.
	priority  int32
	acv       int                   // the nominal concurrency limit
	minCL     int                   // acv less its lendable part; 0 once retired
	maxCL     int                   // acv plus what it may borrow
	sets      []*fairqueue.QueueSet // the last one takes arrivals; earlier ones drain
	executing int                   // width of executing requests
	waiting   int
	retired   bool // removed from the configuration; dispatched from until drained
}

// active returns the queue set that takes arrivals.
func (lv *level) active() *fairqueue.QueueSet { return lv.sets[len(lv.sets)-1] }

// headSet returns the queue set to dispatch from: the oldest with a waiting request.
func (lv *level) headSet() *fairqueue.QueueSet {
	for _, s := range lv.sets {
		if s.Waiting() > 0 {
			return s
		}
	}
	return nil
}

// pruneDrained forgets the draining queue sets with nothing waiting; their executing requests
// keep a pointer to their set and finish against it.
func (lv *level) pruneDrained() {
	if len(lv.sets) == 1 || lv.sets[0].Waiting() > 0 {
		return
	}
	kept := lv.sets[:0]
	for i, s := range lv.sets {
		if i == len(lv.sets)-1 || s.Waiting() > 0 {
			kept = append(kept, s)
		}
	}
	clear(lv.sets[len(kept):])
	lv.sets = kept
}

// flow is what the dispatcher needs of a request's FlowSchema: its level and its metric
// children, resolved once per configuration.
type flow struct {
	level   *level
	metrics *metrics.Flow // nil without metrics
	// guarded: the dispatcher's lock guards the metrics' guarded counters, so dispatches and
	// finishes are recorded with plain additions under the lock (see metrics.Flow).
	guarded bool
}

// newFlow returns the flow of lv with metric children m, guarded by mu if they can be.
func newFlow(lv *level, m *metrics.Flow, mu *sync.Mutex) *flow {
	f := &flow{level: lv, metrics: m}
	f.guarded = f.metrics.Guard(mu)
	return f
}

// dispatchedLocked records a dispatch after the given wait; the caller holds the dispatcher's
// lock.
func (f *flow) dispatchedLocked(wait time.Duration) {
	if f.guarded {
		f.metrics.DispatchedGuarded(wait)
		return
	}
	f.metrics.Dispatched(wait)
}

// finishedLocked records a finish after the given service time; the caller holds the
// dispatcher's lock.
func (f *flow) finishedLocked(service time.Duration) {
	if f.guarded {
		f.metrics.FinishedGuarded(service)
		return
	}
	f.metrics.Finished(service)
}

// config is one applied effective configuration. Its maps are immutable once published, so
// Handle reads them without the lock.
type config struct {
	src    *effective.Config
	levels map[string]*level // by RequestPriority name
	lowest *level
	flows  flowTable // the configuration's schemas, backstops included
	// metrics and mu make the flows of stale schemas.
	metrics *metrics.Metrics
	mu      *sync.Mutex
	// stale holds the flows made on demand for schemas of older configurations; it is read
	// without the dispatcher's lock.
	stale sync.Map // staleKey -> *flow
}

// flowFor returns the flow of schema s, mapping a schema of an older configuration by
// RequestPriority name (the lowest level if that name is gone) and a nil schema to the
// catch-all.
func (c *config) flowFor(s *effective.Schema) *flow {
	if f := c.flows.get(s); f != nil {
		return f
	}
	if s == nil {
		return c.flows.get(c.src.CatchAll)
	}
	key := staleKey{schema: s.Name}
	if s.Priority != nil {
		key.priority = s.Priority.Name
	}
	if v, ok := c.stale.Load(key); ok {
		if f := v.(*flow); !f.metrics.Deleted() {
			return f
		}
	}
	lv := c.lowest
	if named := c.levels[key.priority]; named != nil {
		lv = named
	}
	c.pruneStale()
	v, _ := c.stale.LoadOrStore(key, newStaleFlow(lv, c.metrics, s.Name, c.mu))
	return v.(*flow)
}

// staleKey identifies a schema of an older configuration by name, so that the cache stays as
// small as the set of names however many schema objects callers hold.
type staleKey struct{ schema, priority string }

// newQueueSet returns the queue set of a non-exempt level. A configuration the queues cannot
// take (the effective configuration is validated, so only a bug gets here) degrades to one
// queue per width rather than failing the server.
func newQueueSet(p *effective.Priority, guess time.Duration) (*fairqueue.QueueSet, fairqueue.Config) {
	cfg := fairqueue.Config{QueuesPerWidth: int(p.QueuesPerWidth), HandSize: int(p.HandSize),
		QueueLengthLimit: int(p.QueueLengthLimit), ServiceTimeGuess: guess}
	if s, err := fairqueue.New(cfg); err == nil {
		return s, cfg
	}
	cfg = fairqueue.Config{QueuesPerWidth: 1, QueueLengthLimit: max(cfg.QueueLengthLimit, 1), ServiceTimeGuess: guess}
	s, _ := fairqueue.New(cfg)
	return s, cfg
}

// headWidth returns the width of the request fair queuing dispatches next; the level has a
// waiting request.
func (lv *level) headWidth() int { return lv.headSet().Head().Owner.(*waiter).width }
