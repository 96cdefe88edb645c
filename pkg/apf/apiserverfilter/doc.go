// Package apiserverfilter puts an apf.Filter in the handler chain of a server built on
// k8s.io/apiserver, in place of upstream's genericfilters.WithPriorityAndFairness. It is a
// separate package so that package apf does not make every embedder import k8s.io/apiserver.
//
// The filter takes everything from the server's own earlier filters: the identity from
// request.UserFrom (set by authentication, after impersonation), the attributes from
// request.RequestInfoFrom, and long-running requests from the server's LongRunningRequestCheck
// (Config.LongRunningFunc), so that log, exec, attach, portforward and proxy are never queued;
// nor are health probes (DefaultProbePaths, replaced with the ProbePaths option), which
// kube-apiserver's suggested FlowSchema "probes" exempts.
// Rejections are 429 Too Many Requests written with the apiserver's response writers: a
// metav1.Status of reason TooManyRequests, with Retry-After and details.retryAfterSeconds.
// Responses name the classification in the X-APF-Flow-Schema and X-APF-Request-Priority
// headers.
//
// # Watches
//
// A watch is classified, queued and counted like a read, and holds its seat only while it
// initialises, as with upstream's filter: its handler runs with k8s.io/apiserver's
// initialization signal in its context (package k8s.io/apiserver/pkg/util/flowcontrol), which
// the server's watch cache fires once the initial events are sent; the seat is released then,
// or when the handler returns if nothing fires it (a storage without a watch cache). Other
// long-running requests are classified (their responses name the FlowSchema) and executed at
// once without a seat.
//
// # Debugging
//
// InstallDebugHandlers serves, for the server's operators, what a request would get (explain:
// FlowSchema, RequestPriority, distinguisher, width and queue hand) and dumps of the levels and
// queues in the manner of kube-apiserver's /debug/api_priority_and_fairness/dump_*; each
// request is authorized by the server's authorizer.
//
// # Placement
//
// Upstream's filter sits between impersonation and authorization, and DefaultBuildHandlerChain
// offers no hook there. The simplest wiring puts this filter just inside authorization, around
// the API handler, in genericapiserver.Config.BuildHandlerChainFunc:
//
//	config.BuildHandlerChainFunc = func(apiHandler http.Handler, c *genericapiserver.Config) http.Handler {
//		h := apiserverfilter.WithPriorityAndFairness(apiHandler, filter, c.LongRunningFunc)
//		return genericapiserver.DefaultBuildHandlerChain(h, c)
//	}
//
// Authenticated, impersonated and authorized requests are then flow-controlled; authorization
// itself (a SubjectAccessReview with delegated authorization) is not. A server that writes its
// own chain puts the filter exactly where upstream's sits:
//
//	handler = genericapifilters.WithAuthorization(handler, c.Authorization.Authorizer, c.Serializer)
//	handler = apiserverfilter.WithPriorityAndFairness(handler, filter, c.LongRunningFunc)
//	handler = impersonation.WithImpersonation(handler, c.Authorization.Authorizer, c.Serializer)
//	// ... audit, authentication, request info, as in DefaultBuildHandlerChain
//
// Either way, turn upstream's own limiters off so that requests are not limited twice: leave
// Config.FlowControl nil (RecommendedOptions.Features.EnablePriorityAndFairness = false) and set
// Config.MaxRequestsInFlight and Config.MaxMutatingRequestsInFlight to 0. The package does not
// import k8s.io/apiserver/pkg/server; its watch support links k8s.io/apiserver's flow-control
// package, which a server built on k8s.io/apiserver links anyway.
package apiserverfilter
