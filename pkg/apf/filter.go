package apf

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	internalapf "github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/httpfilter"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// Response headers naming the classification of a request; Filter.Handler sets them on every
// response, served or rejected.
const (
	// HeaderFlowSchema names the FlowSchema the request matched.
	HeaderFlowSchema = httpfilter.HeaderFlowSchema
	// HeaderRequestPriority names the RequestPriority the request was assigned to.
	HeaderRequestPriority = httpfilter.HeaderRequestPriority
)

// Filter enforces API Priority and Fairness. It starts with the backstop configuration
// (every request in the catch-all or, for system:masters, the exempt masters backstop) until a
// source or Update gives it RequestPriorities and FlowSchemas. It is safe for concurrent use.
type Filter struct {
	engine     *internalapf.Engine
	resolver   request.Resolver
	retryAfter time.Duration
	calls      sync.Pool                    // *serveCall
	headers    atomic.Pointer[headerValues] // rebuilt when the configuration changes
}

// New returns a Filter configured by opts, or an error naming the option to fix.
func New(opts Options) (*Filter, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	d, err := opts.dispatchOptions()
	if err != nil {
		return nil, err
	}
	f := &Filter{engine: internalapf.NewEngine(nil, d), resolver: resolverFor(opts.Identity),
		retryAfter: opts.retryAfter()}
	f.calls.New = func() any {
		c := &serveCall{}
		c.run = c.execute
		return c
	}
	return f, nil
}

// Handler returns next behind flow control. Each request is classified from its URL (parsed as
// a Kubernetes API server does) and the identity of Options.Identity, then served at once,
// after waiting in a queue, or rejected with 429 and Retry-After. Responses carry
// HeaderFlowSchema and HeaderRequestPriority. The handler allocates nothing per request with
// the default identity source.
func (f *Filter) Handler(next http.Handler) http.Handler {
	return httpfilter.New(f.engine, f.resolver, next, httpfilter.Options{RetryAfter: f.retryAfter})
}

// Update replaces the configuration with the given objects while requests are in flight, as
// the operator computes it: invalid or dangling objects are left out, and the two backstops
// are added. Requests already classified still end exactly once.
func (f *Filter) Update(rps []v1alpha1.RequestPriority, fss []v1alpha1.FlowSchema) {
	f.engine.Update(effective.Compute(rps, fss))
}

// Explain classifies a against the configuration in force without dispatching it.
func (f *Filter) Explain(a Attributes) Classification {
	attrs := a.internal()
	var res internalapf.Result
	f.engine.Classify(&attrs, &res)
	return classificationOf(&res)
}

// ExplainQueues is Explain with where the request would queue: its level's queues per width
// and the queues dealt to its flow.
func (f *Filter) ExplainQueues(a Attributes) Explanation {
	attrs := a.internal()
	var res internalapf.Result
	f.engine.Classify(&attrs, &res)
	e := Explanation{Classification: classificationOf(&res)}
	if res.Schema != nil && !res.LongRunning && !res.Schema.Priority.Exempt() {
		e.QueuesPerWidth = max(int(res.Schema.Priority.QueuesPerWidth), 1)
		e.Hand = internalapf.Hand(res.Schema.Priority, res.FlowHash)
	}
	return e
}

// Serve classifies a and calls exec under flow control, for servers that parse requests
// themselves (package apiserverfilter uses it). exec runs at most once, in the caller's
// goroutine, with the classification; Serve returns when it returns. A rejected request returns
// a *RejectedError and exec does not run. Long-running requests run at once, uncounted.
func (f *Filter) Serve(ctx context.Context, a *Attributes, exec func(Classification)) error {
	return f.serve(ctx, a, exec, false)
}

// ServeWatch is Serve for a server that tells when a watch has initialised: a watch request
// (verb watch, not marked LongRunning) is queued and counted like a read, and holds its seat
// while exec runs; exec should start the watch, return once it has sent its initial events,
// and leave the rest of the watch to another goroutine. This is how upstream's filter treats
// watches. Other requests are served as by Serve.
func (f *Filter) ServeWatch(ctx context.Context, a *Attributes, exec func(Classification)) error {
	return f.serve(ctx, a, exec, true)
}

// serveCall is the per-request state of Serve, pooled with its run bound once, so that
// serving allocates nothing of its own.
type serveCall struct {
	attrs request.Attributes
	res   internalapf.Result
	exec  func(Classification)
	run   func() // c.execute
}

func (c *serveCall) execute() {
	if c.exec != nil {
		c.exec(classificationOf(&c.res))
	}
}

func (f *Filter) serve(ctx context.Context, a *Attributes, exec func(Classification), watch bool) error {
	c := f.calls.Get().(*serveCall)
	c.attrs, c.res, c.exec = a.internal(), internalapf.Result{}, exec
	defer func() { // even if exec panics
		c.attrs, c.res, c.exec = request.Attributes{}, internalapf.Result{}, nil
		f.calls.Put(c)
	}()
	var o dispatch.Outcome
	if watch {
		o = f.engine.HandleWatchInto(ctx, &c.attrs, &c.res, c.run)
	} else {
		o = f.engine.HandleInto(ctx, &c.attrs, &c.res, c.run)
	}
	if o.Rejected() {
		return &RejectedError{Classification: classificationOf(&c.res), Reason: o.Reason(), RetryAfter: f.retryAfter}
	}
	return nil
}

// DebugHandler serves the configuration in force and the state of the queues as JSON. It
// names every FlowSchema and RequestPriority: serve it to operators only, behind
// authorization.
func (f *Filter) DebugHandler() http.Handler { return httpfilter.DebugHandler(f.engine) }
