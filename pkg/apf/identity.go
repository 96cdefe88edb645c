package apf

import (
	"context"
	"net/http"

	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// The identity of a request that carries none, as a Kubernetes API server names it.
const (
	// AnonymousUser is the user of a request without identity.
	AnonymousUser = request.AnonymousUser
	// UnauthenticatedGroup is the only group of a request without identity.
	UnauthenticatedGroup = request.UnauthenticatedGroup
)

// IdentitySource tells who sent a request. Implementations must be safe for concurrent use.
type IdentitySource interface {
	// Identity returns the authenticated user name and groups of r; ok false (or an empty
	// name) means the request has no identity and is classified as AnonymousUser in
	// UnauthenticatedGroup. The groups slice must not be modified afterwards.
	Identity(r *http.Request) (name string, groups []string, ok bool)
}

// ContextIdentity is the default IdentitySource: the user the embedding server's authenticator
// put in the request context with WithUser, and nothing else. Headers are never believed.
type ContextIdentity struct{}

// Identity implements IdentitySource.
func (ContextIdentity) Identity(r *http.Request) (string, []string, bool) {
	return UserFrom(r.Context())
}

// WithUser returns a context carrying the authenticated user of a request; call it in the
// server's authentication filter, before Filter.Handler. The filter does not modify groups.
func WithUser(ctx context.Context, name string, groups []string) context.Context {
	return request.WithUser(ctx, name, groups)
}

// UserFrom returns the user WithUser put in ctx.
func UserFrom(ctx context.Context) (name string, groups []string, ok bool) {
	u, ok := request.UserFrom(ctx)
	if !ok {
		return "", nil, false
	}
	return u.Name, u.Groups, true
}

// resolverFor returns the engine's resolver for an identity source. The default is the
// engine's own resolver, which reads the context only and allocates nothing.
func resolverFor(id IdentitySource) request.Resolver {
	switch id.(type) {
	case nil, ContextIdentity, *ContextIdentity:
		return request.KubernetesResolver{}
	}
	return identityResolver{id: id}
}

// identityResolver parses the URL as Kubernetes does and asks an IdentitySource who sent it.
type identityResolver struct{ id IdentitySource }

// Resolve implements request.Resolver.
func (i identityResolver) Resolve(r *http.Request, out *request.Attributes) {
	request.ParseURL(r.Method, r.URL.Path, r.URL.RawQuery, out)
	name, groups, ok := i.id.Identity(r)
	if !ok || name == "" {
		name, groups = AnonymousUser, request.AnonymousGroups()
	}
	out.User, out.Groups = name, groups
}
