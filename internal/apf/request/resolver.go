package request

import "net/http"

// Resolver fills the Attributes of an HTTP request. Implementations must overwrite every field
// of out and must be safe for concurrent use. The flow-control filter calls Resolve once per
// request, with an out it reuses.
type Resolver interface {
	Resolve(r *http.Request, out *Attributes)
}

// ResolverFunc adapts a function to Resolver.
type ResolverFunc func(r *http.Request, out *Attributes)

// Resolve calls f(r, out).
func (f ResolverFunc) Resolve(r *http.Request, out *Attributes) { f(r, out) }

// KubernetesResolver is the default Resolver: Kubernetes URL parsing (ParseURL) and the identity
// from the request context (WithUser). A request without identity in its context is
// AnonymousUser in UnauthenticatedGroup: by default the front-proxy headers X-Remote-User and
// X-Remote-Group are ignored, since any client can send them.
//
// TrustProxyHeaders makes the resolver believe those headers when the context carries no
// user. Set it only when an authenticating front proxy sets them and clients cannot reach the
// server directly (or every connection that can send them was verified against the front
// proxy's client CA before the filter); otherwise anyone can claim system:masters. Groups are
// taken as the proxy lists them (an aggregating kube-apiserver forwards system:authenticated
// itself). Resolve allocates nothing beyond what ParseURL does (percent-encoded query
// parameters, the selectors of a list or watch).
type KubernetesResolver struct {
	// TrustProxyHeaders makes the resolver take X-Remote-User and X-Remote-Group as the identity
	// of a request whose context carries none. Only safe behind a verified front proxy.
	TrustProxyHeaders bool
}

var _ Resolver = KubernetesResolver{}

// Resolve implements Resolver.
func (k KubernetesResolver) Resolve(r *http.Request, out *Attributes) {
	ParseURL(r.Method, r.URL.Path, r.URL.RawQuery, out)
	out.User, out.Groups = k.identity(r)
}

func (k KubernetesResolver) identity(r *http.Request) (string, []string) {
	if u, ok := UserFrom(r.Context()); ok {
		return u.Name, u.Groups
	}
	if k.TrustProxyHeaders {
		// Direct map access: the keys are canonical, and Header.Values would copy nothing
		// either, but this documents that the header's slice is shared, not copied.
		if names := r.Header[HeaderUser]; len(names) > 0 && names[0] != "" {
			return names[0], r.Header[HeaderGroup]
		}
	}
	return AnonymousUser, anonymousGroups
}

// AnonymousGroups returns the groups of a request without identity: UnauthenticatedGroup.
// The slice is shared; nobody may modify it.
func AnonymousGroups() []string { return anonymousGroups }
