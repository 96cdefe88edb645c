package apiserverfilter

import (
	"errors"
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"

	"github.com/apf-operator/apf-operator/pkg/apf"
)

// statusCodecs encode the metav1.Status of a rejection, as every API server does.
var statusCodecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(scheme)
}()

// WithPriorityAndFairness returns handler behind flow control by f, for a
// genericapiserver.Config.BuildHandlerChainFunc. It must run after authentication and
// impersonation (it reads request.UserFrom) and after the request-info filter (it reads
// request.RequestInfoFrom); a request missing either gets 500, as upstream's filter answers.
// longRunning is the server's Config.LongRunningFunc; nil treats only proxy, exec, attach and
// portforward as long-running. Watches are classified and hold a seat while they initialise,
// whatever longRunning says, as with upstream's filter. Health probes (DefaultProbePaths, or
// those of the ProbePaths option) are never queued. It panics if f is nil.
func WithPriorityAndFairness(handler http.Handler, f *apf.Filter, longRunning apirequest.LongRunningRequestCheck,
	opts ...Option) http.Handler {
	if f == nil {
		panic("apiserverfilter.WithPriorityAndFairness: the apf.Filter is nil: create it with apf.New")
	}
	p := &priorityAndFairness{next: handler, filter: f, longRunning: longRunning, probes: setOf(DefaultProbePaths)}
	for _, opt := range opts {
		opt(p)
	}
	p.calls.New = func() any {
		c := &call{p: p}
		c.serve = c.run
		return c
	}
	return p
}

// priorityAndFairness is the handler WithPriorityAndFairness returns.
type priorityAndFairness struct {
	next        http.Handler
	filter      *apf.Filter
	longRunning apirequest.LongRunningRequestCheck
	probes      map[string]bool // non-resource paths of health probes, never queued
	calls       sync.Pool       // *call
}

// call is the per-request state of a request that is not a watch, pooled with its serve bound
// once, so that the filter allocates nothing of its own per request.
type call struct {
	p     *priorityAndFairness
	w     http.ResponseWriter
	r     *http.Request
	serve func(apf.Classification) // c.run
}

// run serves a dispatched request: it names the classification and calls the next handler.
func (c *call) run(cl apf.Classification) {
	c.p.filter.SetClassificationHeaders(c.w.Header(), &cl)
	c.p.next.ServeHTTP(c.w, c.r)
}

// serve flow-controls a request that is not a watch.
func (p *priorityAndFairness) serve(w http.ResponseWriter, r *http.Request, a *apf.Attributes) error {
	c := p.calls.Get().(*call)
	c.w, c.r = w, r
	err := p.filter.Serve(r.Context(), a, c.serve)
	c.w, c.r = nil, nil
	p.calls.Put(c)
	return err
}

// ServeHTTP implements http.Handler.
func (p *priorityAndFairness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	info, ok := apirequest.RequestInfoFrom(ctx)
	if !ok {
		responsewriters.InternalError(w, r, errors.New("no RequestInfo found in the context"))
		return
	}
	u, ok := apirequest.UserFrom(ctx)
	if !ok {
		responsewriters.InternalError(w, r, errors.New("no User found in the context"))
		return
	}
	a := attributes(info, u)
	watch := info.IsResourceRequest && info.Verb == "watch"
	a.LongRunning = !watch && (p.isProbe(info) || p.longRunning != nil && p.longRunning(r, info))
	var err error
	if watch {
		err = p.serveWatch(w, r, &a)
	} else {
		err = p.serve(w, r, &a)
	}
	if err != nil {
		p.rejectIfRejected(w, r, err)
	}
}

// serveWatch serves a watch the way upstream's filter does: it is queued and counted like a
// read, and holds its seat only until it has initialised. The handler runs in its own goroutine
// with an initialization signal in its context (k8s.io/apiserver/pkg/util/flowcontrol), which
// the server's watch cache fires once the initial events are sent; the seat is released then,
// or when the handler returns, whichever is first. serveWatch returns when the handler returns,
// and re-panics in the caller's goroutine if the handler panicked.
func (p *priorityAndFairness) serveWatch(w http.ResponseWriter, r *http.Request, a *apf.Attributes) error {
	ctx := r.Context()
	signal := utilflowcontrol.NewInitializationSignal()
	var finished chan any // receives the handler's panic value, or nil
	err := p.filter.ServeWatch(ctx, a, func(c apf.Classification) {
		p.filter.SetClassificationHeaders(w.Header(), &c)
		finished = make(chan any, 1)
		go func() {
			defer func() {
				signal.Signal()
				finished <- recover()
			}()
			p.next.ServeHTTP(w, r.WithContext(utilflowcontrol.WithInitializationSignal(ctx, signal)))
		}()
		signal.Wait()
	})
	if finished != nil {
		if v := <-finished; v != nil {
			panic(v)
		}
	}
	return err
}

// attributes are the flow-control attributes of a request the server has parsed and
// authenticated.
func attributes(info *apirequest.RequestInfo, u user.Info) apf.Attributes {
	a := apf.Attributes{User: u.GetName(), Groups: u.GetGroups(), Verb: info.Verb,
		ResourceRequest: info.IsResourceRequest}
	if !info.IsResourceRequest {
		a.Path = info.Path
		return a
	}
	a.APIGroup, a.Resource, a.Subresource = info.APIGroup, info.Resource, info.Subresource
	a.Namespace, a.Name = info.Namespace, info.Name
	return a
}

// rejectIfRejected writes the 429 of a rejection. It is apart from ServeHTTP so that the
// error target escapes only when there is an error.
func (p *priorityAndFairness) rejectIfRejected(w http.ResponseWriter, r *http.Request, err error) {
	var rejected *apf.RejectedError
	if errors.As(err, &rejected) {
		p.reject(w, r, rejected)
	}
}

// reject writes the 429 Status of a rejected request, with Retry-After.
func (p *priorityAndFairness) reject(w http.ResponseWriter, r *http.Request, rejected *apf.RejectedError) {
	p.filter.SetClassificationHeaders(w.Header(), &rejected.Classification)
	err := apierrors.NewTooManyRequests(rejected.Error(), rejected.RetryAfterSeconds())
	responsewriters.ErrorNegotiated(err, statusCodecs, schema.GroupVersion{}, w, r)
}
