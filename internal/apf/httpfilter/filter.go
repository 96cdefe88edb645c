package httpfilter

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// Response headers naming the classification of a request.
const (
	// HeaderFlowSchema names the FlowSchema the request matched.
	HeaderFlowSchema = "X-APF-Flow-Schema"
	// HeaderRequestPriority names the RequestPriority the request was assigned to.
	HeaderRequestPriority = "X-APF-Request-Priority"
)

// DefaultRetryAfter is the Retry-After of a rejection when Options.RetryAfter is zero.
const DefaultRetryAfter = time.Second

// Options configure the filter.
type Options struct {
	// RetryAfter is how long a rejected client should wait before retrying; sent rounded up to
	// whole seconds, at least 1. Zero means DefaultRetryAfter.
	RetryAfter time.Duration
}

// filter is the middleware returned by New.
type filter struct {
	engine     *apf.Engine
	resolver   request.Resolver
	next       http.Handler
	retryAfter string // Retry-After header value
	headers    *classificationHeaders
	calls      sync.Pool
}

// New returns next behind flow control by engine. resolver computes each request's attributes;
// nil means request.KubernetesResolver{} (identity from the context only; front-proxy headers
// are not trusted). The returned handler is safe for concurrent use.
func New(engine *apf.Engine, resolver request.Resolver, next http.Handler, opts Options) http.Handler {
	if resolver == nil {
		resolver = request.KubernetesResolver{}
	}
	f := &filter{engine: engine, resolver: resolver, next: next, retryAfter: retryAfterSeconds(opts.RetryAfter),
		headers: &classificationHeaders{engine: engine}}
	f.calls.New = func() any {
		c := &call{next: next, headers: f.headers}
		c.exec = c.run
		return c
	}
	return f
}

// retryAfterSeconds formats d for Retry-After: whole seconds, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) string {
	if d <= 0 {
		d = DefaultRetryAfter
	}
	return strconv.FormatInt(max(int64(math.Ceil(d.Seconds())), 1), 10)
}

// call is the per-request state, pooled (with its exec bound once) so that the filter
// allocates nothing per request.
type call struct {
	next    http.Handler
	headers *classificationHeaders
	exec    func() // c.run, bound once
	w       http.ResponseWriter
	r       *http.Request
	attrs   request.Attributes
	res     apf.Result
}

// run is the exec of a dispatched request: it names the classification and serves.
func (c *call) run() {
	c.headers.set(c.w.Header(), &c.res)
	c.next.ServeHTTP(c.w, c.r)
}

// ServeHTTP implements http.Handler.
func (f *filter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := f.calls.Get().(*call)
	c.w, c.r = w, r
	f.resolver.Resolve(r, &c.attrs)
	if o := f.engine.HandleInto(r.Context(), &c.attrs, &c.res, c.exec); o.Rejected() {
		f.reject(w, &c.res, o)
	}
	c.w, c.r, c.attrs, c.res = nil, nil, request.Attributes{}, apf.Result{}
	f.calls.Put(c)
}

// reject writes the 429 response of a rejected request.
func (f *filter) reject(w http.ResponseWriter, res *apf.Result, o dispatch.Outcome) {
	h := w.Header()
	f.headers.set(h, res)
	h.Set("Retry-After", f.retryAfter)
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte("Too many requests (" + o.Reason() + "): rejected by API Priority and Fairness at " +
		"RequestPriority " + strconv.Quote(res.Schema.Priority.Name) + ", FlowSchema " +
		strconv.Quote(res.Schema.Name) + "; retry after " + f.retryAfter + "s\n"))
}
