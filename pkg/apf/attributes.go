package apf

import (
	"fmt"
	"time"

	internalapf "github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// Attributes describe a request the way FlowSchemas test it. Filter.Handler computes them from
// the URL and the IdentitySource; frameworks with their own request parsing pass them to
// Filter.Serve.
//
// When ResourceRequest is false, APIGroup, Resource, Subresource, Namespace and Name are absent
// whatever their content; when it is true, Path is absent.
type Attributes struct {
	// User is the authenticated user name; empty is AnonymousUser.
	User string
	// Groups are the user's groups; nobody may modify the slice.
	Groups []string
	// Verb is the Kubernetes verb (get, list, watch, create, update, patch, delete,
	// deletecollection, proxy) of a resource request, the lower-case HTTP method of a
	// non-resource request.
	Verb string
	// APIGroup is the API group, empty for the core group.
	APIGroup string
	// Resource is the resource (plural, lower case), e.g. pods.
	Resource string
	// Subresource is the subresource, e.g. status or log; empty when none.
	Subresource string
	// Namespace is the namespace; empty for a cluster-scoped request.
	Namespace string
	// Name is the object name; empty for a collection.
	Name string
	// Path is the URL path of a non-resource request, e.g. /healthz.
	Path string
	// ResourceRequest tells a resource request from a non-resource one.
	ResourceRequest bool
	// LongRunning marks a request that must not be flow-controlled (it is classified, then
	// executed at once without taking a seat). Watch, proxy, exec, attach and portforward
	// requests are long-running whatever this field says.
	LongRunning bool
}

// internal converts a to the engine's attributes, applying the anonymous identity. The two
// structs have the same fields in the same order, so the conversion is a copy; a field added to
// one and not the other breaks the build here.
func (a *Attributes) internal() request.Attributes {
	out := request.Attributes(*a)
	if out.User == "" {
		out.User, out.Groups = AnonymousUser, request.AnonymousGroups()
	}
	return out
}

// Classification is where a request belongs.
type Classification struct {
	// FlowSchema is the name of the matching FlowSchema (or of a backstop).
	FlowSchema string `json:"flowSchema"`
	// Backstop is true when FlowSchema is an implicit schema, not an API object: system-top,
	// which takes every request of system:masters to the exempt level ahead of every
	// FlowSchema (so no configuration can lock administrators out), or non-top-backstop, which
	// takes the requests no FlowSchema matches.
	Backstop bool `json:"backstop,omitempty"`
	// RequestPriority is the name of the FlowSchema's RequestPriority.
	RequestPriority string `json:"requestPriority"`
	// Distinguisher is the flow distinguisher (user name, namespace, or empty).
	Distinguisher string `json:"distinguisher,omitempty"`
	// Width is the seats the request takes: 1 for get, list and watch, 2 otherwise.
	Width int `json:"width"`
	// Exempt is true when the RequestPriority is exempt from limits and queuing.
	Exempt bool `json:"exempt,omitempty"`
	// LongRunning is true when the request is not flow-controlled.
	LongRunning bool `json:"longRunning,omitempty"`
}

// Explanation is a Classification with where the request would queue (Filter.ExplainQueues).
type Explanation struct {
	Classification
	// QueuesPerWidth is the number of queues of the RequestPriority for each request width;
	// zero when the request is exempt or long-running (it never queues).
	QueuesPerWidth int `json:"queuesPerWidth,omitempty"`
	// Hand lists the queues dealt to the request's flow, among the queues of its width; the
	// request joins the shortest. Empty when it never queues.
	Hand []int `json:"hand,omitempty"`
}

func classificationOf(r *internalapf.Result) Classification {
	if r.Schema == nil {
		return Classification{}
	}
	return Classification{FlowSchema: r.Schema.Name, Backstop: r.Schema.Backstop, RequestPriority: r.Schema.Priority.Name,
		Distinguisher: r.Distinguisher, Width: r.Width, Exempt: r.Schema.Priority.Exempt(), LongRunning: r.LongRunning}
}

// Rejection reasons of RejectedError.
const (
	// ReasonQueueFull: the request's queue was at its length limit.
	ReasonQueueFull = "queue-full"
	// ReasonTimeout: the request waited the wait limit (a quarter of the request timeout).
	ReasonTimeout = "timeout"
	// ReasonCancelled: the request's context ended while it waited.
	ReasonCancelled = "cancelled"
)

// RejectedError is the error of Filter.Serve for a request flow control rejected; the server
// should answer 429 Too Many Requests with RetryAfterSeconds in Retry-After.
type RejectedError struct {
	// Classification is where the request belonged.
	Classification
	// Reason is ReasonQueueFull, ReasonTimeout or ReasonCancelled.
	Reason string
	// RetryAfter is how long the client should wait (Options.RetryAfter).
	RetryAfter time.Duration
}

// Error implements error.
func (e *RejectedError) Error() string {
	return fmt.Sprintf("too many requests (%s): rejected by API Priority and Fairness at RequestPriority %q, "+
		"FlowSchema %q; retry after %ds", e.Reason, e.RequestPriority, e.FlowSchema, e.RetryAfterSeconds())
}

// RetryAfterSeconds is RetryAfter in whole seconds, rounded up, at least 1.
func (e *RejectedError) RetryAfterSeconds() int {
	return int(max((e.RetryAfter+time.Second-1)/time.Second, 1))
}
