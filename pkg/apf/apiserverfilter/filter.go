package apiserverfilter

import (
	"errors"
	"net/http"

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
// whatever longRunning says, as with upstream's filter. It panics if f is nil.
func WithPriorityAndFairness(handler http.Handler, f *apf.Filter, longRunning apirequest.LongRunningRequestCheck) http.Handler {
	if f == nil {
		panic("apiserverfilter.WithPriorityAndFairness: the apf.Filter is nil: create it with apf.New")
	}
	return &priorityAndFairness{next: handler, filter: f, longRunning: longRunning}
}

// priorityAndFairness is the handler WithPriorityAndFairness returns.
type priorityAndFairness struct {
	next        http.Handler
	filter      *apf.Filter
	longRunning apirequest.LongRunningRequestCheck
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
	a.LongRunning = !watch && p.longRunning != nil && p.longRunning(r, info)
	var err error
	if watch {
		err = p.serveWatch(w, r, &a)
	} else {
		err = p.filter.Serve(ctx, &a, func(c apf.Classification) {
			setClassificationHeaders(w.Header(), &c)
			p.next.ServeHTTP(w, r)
		})
	}
	var rejected *apf.RejectedError
	if errors.As(err, &rejected) {
		reject(w, r, rejected)
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
		setClassificationHeaders(w.Header(), &c)
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

// setClassificationHeaders names the classification in the response headers.
func setClassificationHeaders(h http.Header, c *apf.Classification) {
	h.Set(apf.HeaderFlowSchema, c.FlowSchema)
	h.Set(apf.HeaderRequestPriority, c.RequestPriority)
}

// reject writes the 429 Status of a rejected request, with Retry-After.
func reject(w http.ResponseWriter, r *http.Request, rejected *apf.RejectedError) {
	setClassificationHeaders(w.Header(), &rejected.Classification)
	err := apierrors.NewTooManyRequests(rejected.Error(), rejected.RetryAfterSeconds())
	responsewriters.ErrorNegotiated(err, statusCodecs, schema.GroupVersion{}, w, r)
}
