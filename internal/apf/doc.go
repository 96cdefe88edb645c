// Package apf is the in-process API Priority and Fairness filter: it enforces the
// RequestPriority and FlowSchema configuration of apf-operator inside any Go API server.
//
// An Engine ties the two halves of the request path behind one atomically swapped
// configuration:
//
//  1. classification (package classify): the request's attributes (package request) select the
//     best matching FlowSchema, its RequestPriority, the flow distinguisher, the width and the
//     shuffle-sharding flow hash (proposal: "Request Categorization", "Assignment to a Queue",
//     "Default Behavior");
//  2. dispatch (package dispatch, with fairqueue): the request executes at once, waits in its
//     level's queues, or is rejected (proposal: "Queuing", "Dispatching", "Fair Queuing for
//     Server Requests").
//
// Unless given a Clock, the Engine times requests with the processor's time-stamp counter
// where the kernel trusts it (package tsc), else with the system clock; both are exact.
//
// Long-running requests (watch, proxy, exec, attach, port-forward, followed log) are
// classified, so that responses can name their FlowSchema, but execute without flow control.
//
// Around the Engine: package httpfilter is the http.Handler middleware (429 with Retry-After,
// response headers, a JSON debug endpoint), and package source feeds the Engine the effective
// configuration of the RequestPriority and FlowSchema objects of a cluster through client-go
// informers. Nothing here imports controller-runtime.
//
// Embedders outside this module use the public package pkg/apf, which wraps this one. A
// minimal embedding from inside the module:
//
//	engine := apf.NewEngine(nil, dispatch.Options{ServerConcurrencyLimit: 600,
//		Metrics: metrics.NewMetrics(registry)})
//	src, _ := source.New(restConfig, engine.Update, logger)
//	go src.Run(ctx)
//	handler := httpfilter.New(engine, request.KubernetesResolver{}, apiHandler, httpfilter.Options{})
//
// request.KubernetesResolver takes the identity from the request context only (request.WithUser);
// it believes the X-Remote-User / X-Remote-Group headers only with TrustProxyHeaders.
package apf
