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
// longRunning is the server's Config.LongRunningFunc; nil treats only watch, proxy, exec,
// attach and portforward as long-running. It panics if f is nil.
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
	a.LongRunning = p.longRunning != nil && p.longRunning(r, info)
	err := p.filter.Serve(ctx, &a, func(c apf.Classification) {
		setClassificationHeaders(w.Header(), &c)
		p.next.ServeHTTP(w, r)
	})
	var rejected *apf.RejectedError
	if errors.As(err, &rejected) {
		reject(w, r, rejected)
	}
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
