package request

import "context"

// Identity defaults for a request that carries none, as a Kubernetes API server names an
// anonymous request.
const (
	// AnonymousUser is the user of a request without identity.
	AnonymousUser = "system:anonymous"
	// UnauthenticatedGroup is the group of a request without identity.
	UnauthenticatedGroup = "system:unauthenticated"
)

// Front-proxy headers of the Kubernetes request-header authenticator.
const (
	// HeaderUser carries the user name.
	HeaderUser = "X-Remote-User"
	// HeaderGroup carries one group; it may be repeated.
	HeaderGroup = "X-Remote-Group"
)

var anonymousGroups = []string{UnauthenticatedGroup}

// userKey is the context key of the authenticated user.
type userKey struct{}

// User is an authenticated identity.
type User struct {
	// Name is the user name.
	Name string
	// Groups are the user's groups; nobody may modify the slice once it is in a context.
	Groups []string
}

// WithUser returns a context carrying the authenticated user; an embedding server's
// authenticator calls it before the flow-control filter, which takes the identity from it (and
// ignores the front-proxy headers even when it trusts them).
func WithUser(ctx context.Context, name string, groups []string) context.Context {
	return context.WithValue(ctx, userKey{}, &User{Name: name, Groups: groups})
}

// UserFrom returns the user WithUser put in ctx.
func UserFrom(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(userKey{}).(*User)
	return u, ok && u != nil
}
