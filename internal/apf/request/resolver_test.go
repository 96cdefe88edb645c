package request

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

func TestKubernetesResolverIdentity(t *testing.T) {
	r := httptest.NewRequest("GET", "/api/v1/namespaces/team-a/pods?watch=true", nil)
	r.Header.Add(HeaderUser, "alice")
	r.Header.Add(HeaderGroup, "devs")
	r.Header.Add(HeaderGroup, "system:authenticated")

	var a Attributes
	KubernetesResolver{TrustProxyHeaders: true}.Resolve(r, &a)
	if a.User != "alice" || !slices.Equal(a.Groups, []string{"devs", "system:authenticated"}) {
		t.Errorf("identity from headers = %q %v; want alice [devs system:authenticated]", a.User, a.Groups)
	}
	if a.Verb != VerbWatch || a.Namespace != "team-a" || a.Resource != "pods" || !a.ResourceRequest {
		t.Errorf("attributes = %+v; want a watch of pods in team-a", a)
	}

	KubernetesResolver{}.Resolve(r, &a)
	if a.User != AnonymousUser || !slices.Equal(a.Groups, []string{UnauthenticatedGroup}) {
		t.Errorf("default (headers not trusted): identity = %q %v; want the anonymous user", a.User, a.Groups)
	}

	ctx := WithUser(r.Context(), "system:node:n1", []string{"system:nodes"})
	KubernetesResolver{TrustProxyHeaders: true}.Resolve(r.WithContext(ctx), &a)
	if a.User != "system:node:n1" || !slices.Equal(a.Groups, []string{"system:nodes"}) {
		t.Errorf("identity from context = %q %v; want the context's user, not the headers'", a.User, a.Groups)
	}
}

func TestKubernetesResolverAnonymous(t *testing.T) {
	r := httptest.NewRequest("GET", "/healthz", nil)
	r.Header.Set(HeaderUser, "") // an empty user name is no identity
	var a Attributes
	a.Namespace = "stale"
	KubernetesResolver{TrustProxyHeaders: true}.Resolve(r, &a)
	want := Attributes{User: AnonymousUser, Groups: []string{UnauthenticatedGroup}, Verb: "get", Path: "/healthz"}
	if !equalAttributes(a, want) || a.Groups[0] != UnauthenticatedGroup {
		t.Errorf("got %+v, want %+v", a, want)
	}
}

func TestUserFromEmptyContext(t *testing.T) {
	if u, ok := UserFrom(httptest.NewRequest("GET", "/", nil).Context()); ok || u != nil {
		t.Errorf("UserFrom(empty) = %v, %v; want nil, false", u, ok)
	}
}

func TestResolverFunc(t *testing.T) {
	var f Resolver = ResolverFunc(func(_ *http.Request, out *Attributes) { *out = Attributes{User: "u"} })
	var a Attributes
	f.Resolve(httptest.NewRequest("GET", "/", nil), &a)
	if a.User != "u" {
		t.Errorf("ResolverFunc did not run: %+v", a)
	}
}

func TestKubernetesResolverAllocatesNothing(t *testing.T) {
	r := httptest.NewRequest("GET", "/api/v1/namespaces/team-a/pods/web", nil)
	r.Header.Add(HeaderUser, "alice")
	r.Header.Add(HeaderGroup, "devs")
	var a Attributes
	if n := testing.AllocsPerRun(100, func() { KubernetesResolver{TrustProxyHeaders: true}.Resolve(r, &a) }); n != 0 {
		t.Fatalf("Resolve allocates %.0f times; want 0", n)
	}
}

// TestKubernetesResolverIgnoresSpoofedMasters checks the secure default: a client that sends
// X-Remote-Group: system:masters without a context user is anonymous.
func TestKubernetesResolverIgnoresSpoofedMasters(t *testing.T) {
	r := httptest.NewRequest("GET", "/api/v1/pods", nil)
	r.Header.Set(HeaderUser, "x")
	r.Header.Set(HeaderGroup, "system:masters")
	var a Attributes
	KubernetesResolver{}.Resolve(r, &a)
	if a.User != AnonymousUser || slices.Contains(a.Groups, "system:masters") {
		t.Errorf("spoofed headers: identity = %q %v; want %s without system:masters", a.User, a.Groups, AnonymousUser)
	}
}
