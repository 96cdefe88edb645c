// Package apf is the public, stable API of apf-operator's in-process API Priority and Fairness
// filter: it enforces the RequestPriority and FlowSchema configuration of apf-operator inside
// any Go HTTP or API server, without controller-runtime.
//
// A Filter classifies each request (FlowSchema, RequestPriority, flow distinguisher) and
// executes it at once, queues it fairly, or rejects it with 429 Too Many Requests and
// Retry-After:
//
//	f, err := apf.New(apf.Options{ServerConcurrencyLimit: 600, RequestTimeout: time.Minute})
//	handler := f.Handler(apiHandler)
//
// Its configuration comes from a source: an InformerSource watching the RequestPriority and
// FlowSchema objects of a cluster through client-go, or a StaticSource read from manifests
// (LoadManifests). Filter.Update applies objects directly.
//
// # Identity
//
// FlowSchemas match on the user and groups of a request. By default (Options.Identity nil) the
// identity comes only from the request context, where the embedding server's authenticator
// puts it with WithUser; a request without one is system:anonymous in system:unauthenticated.
// Headers are never believed by default: X-Remote-User and X-Remote-Group are honoured only
// through an IdentitySource that verifies the client certificate of the front proxy that set
// them, such as package requestheader, built on k8s.io/apiserver's request-header
// authenticator.
//
// Servers built on k8s.io/apiserver use package apiserverfilter instead of Filter.Handler: it
// takes the identity and request attributes the server's own filters computed.
package apf
