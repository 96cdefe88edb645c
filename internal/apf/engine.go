package apf

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// Result is the classification of a request.
type Result = classify.Result

// Engine classifies and dispatches requests under one effective configuration, swapped
// atomically by Update. It is safe for concurrent use.
type Engine struct {
	dispatcher *dispatch.Dispatcher

	// cur is the configuration and its classifier, read by every request without a lock.
	cur atomic.Pointer[snapshot]
	// updateMu serializes Update, so that the dispatcher and the classifier change in the
	// same order.
	updateMu sync.Mutex
}

// snapshot is one configuration with its compiled classifier.
type snapshot struct {
	cfg        *effective.Config
	classifier *classify.Classifier
}

// NewEngine returns an Engine enforcing cfg (nil: the backstop configuration, until Update).
//
// Without opts.Clock the Engine reads the clock twice per request, from the time-stamp counter
// where the kernel uses it as its clocksource (package tsc: about 10 ns a reading) and from
// the system clock elsewhere (about 30 ns on a virtual machine); dispatch.RealClock forces the
// system clock.
func NewEngine(cfg *effective.Config, opts dispatch.Options) *Engine {
	if cfg == nil {
		cfg = effective.Compute(nil, nil)
	}
	e := &Engine{dispatcher: dispatch.New(cfg, opts)}
	e.cur.Store(&snapshot{cfg: cfg, classifier: classify.Compile(cfg)})
	return e
}

// Update applies a new effective configuration while requests are in flight; nil is ignored.
// The classifier is compiled before anything changes; then the dispatcher takes the new
// levels and only then do new requests classify against the new FlowSchemas. A request
// classified against the old configuration is mapped by the dispatcher onto the new one and
// still ends exactly once.
func (e *Engine) Update(cfg *effective.Config) {
	if cfg == nil {
		return
	}
	next := &snapshot{cfg: cfg, classifier: classify.Compile(cfg)}
	e.updateMu.Lock()
	defer e.updateMu.Unlock()
	e.dispatcher.Update(cfg)
	e.cur.Store(next)
}

// Classify classifies a against the current configuration, without dispatching it.
func (e *Engine) Classify(a *request.Attributes, out *Result) {
	e.cur.Load().classifier.Classify(a, out)
}

// Handle classifies a and runs exec under flow control: at once, after waiting in a queue, or
// never (rejected). It returns the classification and how the request ended; exec runs at most
// once, in the caller's goroutine, and only when the outcome is dispatch.Executed. A
// long-running request runs exec at once, uncounted.
func (e *Engine) Handle(ctx context.Context, a *request.Attributes, exec func()) (Result, dispatch.Outcome) {
	var r Result
	o := e.HandleInto(ctx, a, &r, exec)
	return r, o
}

// HandleInto is Handle with the classification written to res before exec runs, so that exec
// can read it (the HTTP filter sets response headers from it). It allocates nothing.
func (e *Engine) HandleInto(ctx context.Context, a *request.Attributes, res *Result, exec func()) dispatch.Outcome {
	e.cur.Load().classifier.Classify(a, res)
	return e.dispatch(ctx, res, exec)
}

// HandleWatchInto is HandleInto for a server that tells when a watch has initialised, as
// upstream's filter does: a watch (that the caller did not mark long-running) is dispatched
// like a read, and exec holds its seat until it returns, which it should do once the watch
// has sent its initial events. Other requests are handled as by HandleInto.
func (e *Engine) HandleWatchInto(ctx context.Context, a *request.Attributes, res *Result, exec func()) dispatch.Outcome {
	e.cur.Load().classifier.Classify(a, res)
	if res.LongRunning && onlyWatchIsLongRunning(a) {
		res.LongRunning = false
	}
	return e.dispatch(ctx, res, exec)
}

// onlyWatchIsLongRunning reports whether a is long-running only for being a watch: the same
// request with another read verb would not be.
func onlyWatchIsLongRunning(a *request.Attributes) bool {
	if a.Verb != request.VerbWatch || !a.ResourceRequest {
		return false
	}
	other := *a
	other.Verb = request.VerbList
	return !other.IsLongRunning()
}

// dispatch runs exec for a classified request: at once if it is long-running, else under
// flow control.
func (e *Engine) dispatch(ctx context.Context, res *Result, exec func()) dispatch.Outcome {
	if res.LongRunning {
		if exec != nil {
			exec()
		}
		return dispatch.Executed
	}
	req := dispatch.Request{Schema: res.Schema, FlowHash: res.FlowHash, Width: res.Width}
	return e.dispatcher.Handle(ctx, &req, exec)
}

// Config returns the effective configuration in force.
func (e *Engine) Config() *effective.Config { return e.cur.Load().cfg }

// Classifier returns the classifier of the configuration in force.
func (e *Engine) Classifier() *classify.Classifier { return e.cur.Load().classifier }

// State returns the dispatcher's state: levels, queues and counts.
func (e *Engine) State() dispatch.State { return e.dispatcher.Snapshot() }
