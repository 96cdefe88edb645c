// Package httpfilter puts an apf.Engine in front of an http.Handler: every request is
// resolved to its attributes (a pluggable request.Resolver), classified, and then executed,
// queued or rejected under API Priority and Fairness.
//
// A rejected request gets HTTP 429 Too Many Requests with a Retry-After header (whole seconds,
// Options.RetryAfter) and a short plain-text body naming the reason: queue-full (its queue was
// full), timeout (it waited longer than the wait limit) or cancelled (its client gave up while
// it waited). Every response of a flow-controlled or long-running request carries the headers
// X-APF-Flow-Schema and X-APF-Request-Priority, naming the FlowSchema and the RequestPriority
// the request was classified to (a backstop's name when no FlowSchema matched).
//
// DebugHandler serves a JSON dump of the configuration in force and the dispatcher's levels,
// queues and counts.
package httpfilter
