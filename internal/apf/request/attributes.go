package request

// Attributes are the attributes of one authenticated request that FlowSchemas test.
//
// When ResourceRequest is false, APIGroup, Resource, Subresource, Namespace and Name are absent
// whatever their content; when it is true, Path is absent.
type Attributes struct {
	// User is the authenticated user name.
	User string
	// Groups are the user's groups. The slice may be shared with its source (a header map or
	// the context); nobody may modify it.
	Groups []string
	// Verb is the Kubernetes verb: get, list, watch, create, update, patch, delete,
	// deletecollection or proxy for a resource request; the lower-case HTTP method for a
	// non-resource request.
	Verb string
	// APIGroup is the API group, empty for the core group.
	APIGroup string
	// Resource is the resource (plural, lower case), e.g. pods.
	Resource string
	// Subresource is the subresource, e.g. status, log, exec; empty when none.
	Subresource string
	// Namespace is the namespace; empty for a cluster-scoped request.
	Namespace string
	// Name is the object name; empty for a collection.
	Name string
	// Path is the URL path of a non-resource request, e.g. /healthz.
	Path string
	// ResourceRequest tells a resource request from a non-resource one.
	ResourceRequest bool
	// LongRunning is set by a resolver that knows the request is long-running for a reason
	// the other attributes do not show (e.g. a log request with follow=true). Watch, proxy,
	// exec, attach and port-forward requests are recognised from Verb and Subresource anyway.
	LongRunning bool
}

// Reset clears a, keeping nothing of the previous request.
func (a *Attributes) Reset() { *a = Attributes{} }

// IsLongRunning reports whether the request is long-running and therefore not flow-controlled:
// a watch, a proxy request, exec, attach, port-forward, or a request the resolver flagged
// (log with follow=true).
func (a *Attributes) IsLongRunning() bool {
	if a.LongRunning {
		return true
	}
	if !a.ResourceRequest {
		return false
	}
	switch a.Verb {
	case VerbWatch, VerbProxy:
		return true
	}
	switch a.Subresource {
	case "exec", "attach", "portforward", "proxy":
		return true
	}
	return false
}

// IsReadOnly reports whether the verb only reads (get, list, watch): such requests have
// width 1, all others width 2.
func (a *Attributes) IsReadOnly() bool {
	switch a.Verb {
	case VerbGet, VerbList, VerbWatch:
		return true
	}
	return false
}

// Kubernetes verbs of resource requests.
const (
	VerbGet              = "get"
	VerbList             = "list"
	VerbWatch            = "watch"
	VerbCreate           = "create"
	VerbUpdate           = "update"
	VerbPatch            = "patch"
	VerbDelete           = "delete"
	VerbDeleteCollection = "deletecollection"
	VerbProxy            = "proxy"
)
