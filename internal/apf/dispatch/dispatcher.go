package dispatch

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/fairqueue"
	"github.com/apf-operator/apf-operator/internal/apf/metrics"
	"github.com/apf-operator/apf-operator/internal/apf/tsc"
)

// Request is a classified request.
type Request struct {
	// Schema is the FlowSchema the request matched; Schema.Priority is its level. It may come
	// from an older configuration than the current one: it is then mapped by RequestPriority
	// name onto the current configuration (the lowest level if the name is gone). nil means
	// the catch-all schema.
	Schema *effective.Schema
	// FlowHash is shufflesharding.Hash(schema name, flow distinguisher).
	FlowHash uint64
	// Width is 1 for a read-only request, 2 for a mutating one; other values are clamped.
	Width int
}

// Dispatcher is the flow-control server (see the package doc). It is safe for concurrent use.
type Dispatcher struct {
	scl       int
	waitLimit time.Duration
	guess     time.Duration
	clock     Clock         // nil: read tsc or the monotonic clock directly
	useTSC    bool          // read tsc
	tsc       tsc.Clock     // a copy: one pointer less to follow per reading
	epoch     time.Time     // with clock == nil and !useTSC
	origin    time.Duration // tsc.Elapsed() at New
	metrics   *metrics.Metrics
	coarse    *coarseClock // nil with a Clock from the Options
	waiters   sync.Pool    // *waiter
	handed    sync.Pool    // *handedFinish
	onTimer   func()

	// cur is the applied configuration, read by Handle without the lock.
	cur atomic.Pointer[config]
	// contended is true while some request waits (d.waiting > 0); it tells Handle and finish,
	// before they take the lock, whether the coarse clock is exact enough.
	contended atomic.Bool
	updateMu  sync.Mutex // serializes Update
	// handover holds the finishes handed to the goroutine that holds mu (handover.go).
	handover handoverStack

	mu         sync.Mutex
	cfg        *config  // the configuration admissions use; equals cur
	order      []*level // levels that may dispatch, highest priority first
	executing  int      // width of executing non-exempt requests
	reserved   int      // sum over levels of max(0, minCL - executing): seats no one may borrow
	minSum     int      // sum over levels of minCL
	waiting    int      // waiting requests, all levels
	fifo       waiterList
	late       *handedFinish // applied handed-over finishes whose series await deletion
	timer      Timer
	timerArmed bool

	// testCheck, set only by tests before any traffic, sees every dispatch and the end of
	// every dispatching round under the lock.
	testCheck dispatchChecker
}

// dispatchChecker checks the dispatcher's invariants in tests (export_test.go).
type dispatchChecker interface {
	// dispatching is called before a request of width w at lv is counted.
	dispatching(lv *level, w int)
	// roundEnded is called when dispatching stops for want of seats, limits or requests.
	roundEnded()
}

// New returns a Dispatcher for cfg (nil means the backstop configuration: no objects).
func New(cfg *effective.Config, opts Options) *Dispatcher {
	d := &Dispatcher{
		scl:       max(opts.ServerConcurrencyLimit, 1),
		waitLimit: opts.WaitLimit,
		guess:     opts.ServiceTimeGuess,
		clock:     opts.Clock,
		metrics:   opts.Metrics,
	}
	if d.waitLimit <= 0 {
		d.waitLimit = DefaultWaitLimit
	}
	if d.guess <= 0 {
		d.guess = fairqueue.DefaultServiceTimeGuess
	}
	switch d.clock.(type) {
	case nil:
		d.clock, d.epoch = nil, time.Now()
		if c, err := tsc.Default(); err == nil {
			d.useTSC, d.tsc, d.origin = true, *c, c.Elapsed()
		}
	case RealClock:
		d.clock, d.epoch = nil, time.Now()
	default:
		d.epoch = d.clock.Now()
	}
	if d.clock == nil {
		d.coarse = newCoarseClock(d.now)
	}
	d.waiters.New = func() any { return newWaiter() }
	d.handed.New = func() any { return new(handedFinish) }
	d.onTimer = d.expireOnTimer
	if cfg == nil || len(cfg.Priorities) == 0 {
		cfg = effective.Compute(nil, nil)
	}
	d.Update(cfg)
	return d
}

// Handle admits r, waits if it must, calls exec exactly once in the caller's goroutine if the
// request is dispatched, and returns when exec returns or the request is rejected. Every call
// ends exactly once with one Outcome; the time the request waited is recorded in the wait
// histogram. If exec panics, the seat is released and the panic continues.
func (d *Dispatcher) Handle(ctx context.Context, r *Request, exec func()) Outcome {
	if exec == nil {
		exec = func() {}
	}
	cfg := d.cur.Load()
	f := cfg.flowFor(r.Schema)
	if f.level.exempt {
		return d.handleExempt(ctx, r, f, exec)
	}
	width := min(max(r.Width, 1), fairqueue.MaxWidth, d.scl)
	now := d.stamp()
	d.lock()
	if d.cfg != cfg { // Update ran since the lookup
		if f = d.cfg.flowFor(r.Schema); f.level.exempt {
			d.unlock()
			return d.handleExempt(ctx, r, f, exec)
		}
	}
	f = d.holdLocked(f, r.Schema)
	if d.waiting > 0 {
		d.expireLocked(now)
	}
	if d.waiting == 0 && d.verdictLocked(f.level, width) >= borrows {
		return d.fastPathLocked(f, r.FlowHash, width, now, exec)
	}
	return d.waitLocked(ctx, f, r.FlowHash, width, now, exec)
}

// fastPathLocked dispatches a request at once when nothing waits and its level's limits let
// it take free seats (see the package doc for why this is exactly what queuing it would do).
// It unlocks d.mu.
func (d *Dispatcher) fastPathLocked(f *flow, hash uint64, width int, now time.Duration, exec func()) Outcome {
	var seat fairqueue.Request
	lv := f.level
	set := lv.active()
	set.Start(now, &seat, hash, width)
	if d.testCheck != nil {
		d.testCheck.dispatching(lv, width)
	}
	d.startedLocked(lv, width)
	f.dispatchedLocked(0)
	if d.handedOver() { // d.unlock(), inlined
		d.unlockHanded()
	} else {
		d.mu.Unlock()
		d.afterUnlock()
	}
	d.execute(f, set, &seat, width, now, exec)
	return Executed
}

// execute runs exec for a dispatched request and finishes it, even if exec panics.
func (d *Dispatcher) execute(f *flow, set *fairqueue.QueueSet, seat *fairqueue.Request, width int,
	dispatchedAt time.Duration, exec func()) {
	defer d.finish(f, set, seat, width, dispatchedAt)
	exec()
}

// finish releases a dispatched request's seats, corrects its queue's virtual time by the
// actual service time, and dispatches what now fits. If another goroutine holds the lock, it
// hands that work over to it instead of waiting (handover.go).
func (d *Dispatcher) finish(f *flow, set *fairqueue.QueueSet, seat *fairqueue.Request, width int, dispatchedAt time.Duration) {
	now := d.stamp()
	if !d.mu.TryLock() {
		d.handOver(f, set, seat, width, dispatchedAt, now)
		return
	}
	late := d.finishLocked(f, set, seat, width, dispatchedAt, now)
	if d.handedOver() { // d.unlock(), inlined
		d.unlockHanded()
	} else {
		d.mu.Unlock()
		d.afterUnlock()
	}
	d.deleteIfUnused(f, late)
}

// finishLocked is finish under the lock. It reports whether f's series is to be deleted once
// the lock is released.
func (d *Dispatcher) finishLocked(f *flow, set *fairqueue.QueueSet, seat *fairqueue.Request, width int,
	dispatchedAt, now time.Duration) (late bool) {
	service := max(now-dispatchedAt, 0)
	lv := f.level
	set.Finish(now, seat, service)
	d.endedLocked(lv, width)
	f.finishedLocked(service)
	late = d.releaseSeriesLocked(f)
	if d.waiting > 0 {
		d.expireLocked(now)
		d.dispatchLocked(now)
	}
	return late
}

// runExempt runs a request of the exempt level: at once, uncounted.
func (d *Dispatcher) runExempt(f *flow, exec func()) {
	lv := f.level
	lv.exemptExecuting.Add(1)
	defer lv.exemptExecuting.Add(-1)
	m := f.metrics
	if m == nil {
		exec()
		return
	}
	m.Dispatched(0)
	start := d.stamp()
	defer func() { m.Finished(max(d.stamp()-start, 0)) }()
	exec()
}

// stamp returns the time for an admission or a finish: from the coarse clock while no request
// waits, else exact (see Clocks in the package doc). Without waiting requests no decision
// depends on the time; the metrics' durations are measured to about a millisecond and the
// virtual-time bookkeeping of busy levels to a tick per request. Fair queuing among waiting
// requests and their wait limits use exact readings.
func (d *Dispatcher) stamp() time.Duration {
	if d.coarse != nil && !d.contended.Load() {
		return d.coarse.now()
	}
	return d.now()
}

// now returns the time since the dispatcher's epoch: from the time-stamp counter where it is
// trusted (package tsc), else from the monotonic clock only (time.Since reads just that), or
// from the Clock given in the Options.
func (d *Dispatcher) now() time.Duration {
	if d.useTSC {
		return d.tsc.Elapsed() - d.origin
	}
	return d.clockNow()
}

// clockNow is now without the time-stamp counter.
func (d *Dispatcher) clockNow() time.Duration {
	if d.clock == nil {
		return time.Since(d.epoch)
	}
	return d.clock.Now().Sub(d.epoch)
}

// lockSpins is how many times lockContended tries the lock, yielding the processor in
// between, before it blocks.
const lockSpins = 64

// lockContended takes d.mu when a first try failed. Critical sections last tens of
// nanoseconds, but with many more goroutines than processors a sync.Mutex whose waiters park
// soon enters starvation mode, in which every unlock hands the lock to a parked goroutine: a
// goroutine switch per acquisition, a convoy. Trying again after yielding, instead of parking,
// keeps the lock with whichever goroutine runs; measured with 256 goroutines on 2 processors
// (test/benchmark, Contended), 0.94 M requests/s with Lock and 2.5 M with this.
func (d *Dispatcher) lockContended() {
	for range lockSpins {
		runtime.Gosched()
		if d.mu.TryLock() {
			return
		}
	}
	d.mu.Lock()
}
