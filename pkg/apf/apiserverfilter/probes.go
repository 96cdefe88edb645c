package apiserverfilter

import (
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// DefaultProbePaths are the health-check paths a server built on k8s.io/apiserver serves to
// its kubelet and load balancers. kube-apiserver's suggested FlowSchema "probes" sends GETs of
// exactly these paths to the exempt level, so that an overloaded server is not also killed by
// failing its liveness probes; WithPriorityAndFairness does the same by default.
var DefaultProbePaths = []string{"/healthz", "/livez", "/readyz"}

// Option changes how WithPriorityAndFairness treats requests.
type Option func(*priorityAndFairness)

// ProbePaths replaces DefaultProbePaths: GET and HEAD requests of exactly these non-resource
// paths are classified (their responses name the FlowSchema) and executed at once, never
// queued or rejected, like long-running requests. With no path, probes are flow-controlled like
// every other request.
func ProbePaths(paths ...string) Option {
	return func(p *priorityAndFairness) { p.probes = setOf(paths) }
}

func setOf(paths []string) map[string]bool {
	set := make(map[string]bool, len(paths))
	for _, path := range paths {
		set[path] = true
	}
	return set
}

// isProbe reports whether info is a health probe that is never queued.
func (p *priorityAndFairness) isProbe(info *apirequest.RequestInfo) bool {
	return !info.IsResourceRequest && (info.Verb == "get" || info.Verb == "head") && p.probes[info.Path]
}
