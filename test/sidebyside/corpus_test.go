package sidebyside

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	k8suser "k8s.io/apiserver/pkg/authentication/user"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// The corpus stays out of what kube-apiserver's suggested FlowSchemas (precedence 2 to 900)
// take ahead of every projected one by design (docs/enforcement.md "Order"): GET of
// /healthz, /readyz, /livez and below (probes), the users system:kube-controller-manager and
// system:kube-scheduler, service accounts of kube-system, the group system:nodes. Nor does it
// hold long-running requests other than watches (exec, log, proxy, ...), which upstream serves
// without classifying them. Those differences are pinned in differences_test.go.

// identity is who sends a request.
type identity struct {
	name   string
	groups []string
}

func (id identity) String() string { return id.name + "[" + strings.Join(id.groups, ",") + "]" }

func authenticated(name string, extra ...string) identity {
	return identity{name: name, groups: append(extra, k8suser.AllAuthenticated)}
}

func serviceAccount(namespace, name string) identity {
	return identity{name: "system:serviceaccount:" + namespace + ":" + name,
		groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, k8suser.AllAuthenticated}}
}

var (
	anonymous = identity{name: k8suser.Anonymous, groups: []string{k8suser.AllUnauthenticated}}
	admin     = authenticated("admin", k8suser.SystemPrivilegedGroup)
	// plain identities match no tenant schema on resource requests.
	plain = []identity{authenticated("zed"), anonymous, serviceAccount("team-c", "default"), authenticated("frank")}
	// everyone is the pool of the corpus's random part.
	everyone = append([]identity{admin, authenticated("alice"), authenticated("bob"), authenticated("carol"),
		authenticated("dave"), authenticated("erin"), authenticated("grace"), authenticated("heidi"),
		authenticated("trent"), authenticated("olga", "ops"), authenticated("dev", "developers"),
		authenticated("ops-admin"), serviceAccount("team-a", "deployer"), serviceAccount("team-a", "viewer"),
		serviceAccount("team-b", "builder"), serviceAccount("late", "sa"),
		authenticated("system:controller:garbage-collector"), authenticated("system:controller:foo"),
		authenticated("system:controller:bar")}, plain...)
)

// kind is an API resource.
type kind struct{ group, version, resource string }

var kinds = []kind{
	{"", "v1", "pods"}, {"", "v1", "configmaps"}, {"", "v1", "secrets"}, {"", "v1", "namespaces"},
	{"apps", "v1", "deployments"}, {"apps", "v1", "statefulsets"}, {"batch", "v1", "jobs"},
	{"batch", "v1", "cronjobs"}, {"coordination.k8s.io", "v1", "leases"},
	{"rbac.authorization.k8s.io", "v1", "clusterroles"},
}

var (
	resourceVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	namespaces    = []string{"team-a", "team-b", "team-c", "default", "kube-system", "kube-public", ""}
	subresources  = []string{"", "", "", "status", "scale"}
	// paths are non-resource paths none of kube-apiserver's suggested schemas takes.
	paths = []string{"/version", "/version/openapi", "/versions", "/api", "/apis", "/apis/apps/v1",
		"/apis/batch/v1", "/openapi/v2", "/openapi/v3/apis/apps/v1", "/metrics", "/foo/bar", "/foo", "/logs/x"}
	methods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
)

// call is one request of the corpus.
type call struct {
	id             identity
	method, target string
}

func (c call) String() string { return fmt.Sprintf("%s %s %s", c.id, c.method, c.target) }

// requestInfos is the request-info factory of kube-apiserver.
var requestInfos = &apirequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api")}

// request builds the http.Request as the server's earlier filters leave it: its RequestInfo
// parsed by the real factory and its user in the context.
func (c call) request() (*http.Request, *apirequest.RequestInfo, error) {
	r := httptest.NewRequest(c.method, c.target, nil)
	info, err := requestInfos.NewRequestInfo(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%v: parsing the request info: %w", c, err)
	}
	ctx := apirequest.WithRequestInfo(r.Context(), info)
	ctx = apirequest.WithUser(ctx, &k8suser.DefaultInfo{Name: c.id.name, Groups: c.id.groups})
	return r.WithContext(ctx), info, nil
}

// generator draws calls from a seeded source, so a seed always gives the same corpus.
type generator struct{ rng *rand.Rand }

func newGenerator(seed uint64) *generator {
	return &generator{rng: rand.New(rand.NewPCG(seed, seed^0x5eed))}
}

func pick[T any](g *generator, from ...T) T { return from[g.rng.IntN(len(from))] }

// corpus returns n calls: two aimed at each schema of aimedAt (in turn), then random calls of
// any identity.
func (g *generator) corpus(n int) []call {
	aimed := g.aimedAt()
	out := make([]call, 0, n)
	for i := 0; i < n; i++ {
		if i < 2*len(aimed) {
			out = append(out, aimed[i%len(aimed)]())
			continue
		}
		out = append(out, g.any(pick(g, everyone...)))
	}
	return out
}

// any is a random resource (three in five) or non-resource call of id.
func (g *generator) any(id identity) call {
	if g.rng.IntN(5) < 3 {
		return g.resource(id, pick(g, resourceVerbs...), pick(g, kinds...), pick(g, namespaces...), pick(g, subresources...))
	}
	return g.nonResource(id, pick(g, methods...), pick(g, paths...))
}

func (g *generator) nonResource(id identity, method, path string) call {
	return call{id: id, method: method, target: path}
}

// resource is a call of verb on k; the namespace is dropped for cluster-scoped kinds and a
// subresource needs an object, so verbs on collections become get with a subresource.
func (g *generator) resource(id identity, verb string, k kind, namespace, subresource string) call {
	if k.resource == "namespaces" || k.resource == "clusterroles" {
		namespace = ""
	}
	collection := verb == "list" || verb == "watch" || verb == "deletecollection" || (verb == "create" && subresource == "")
	if subresource != "" && collection {
		verb, collection = "get", false
	}
	target := "/apis/" + k.group + "/" + k.version
	if k.group == "" {
		target = "/api/" + k.version
	}
	if namespace != "" {
		target += "/namespaces/" + namespace
	}
	target += "/" + k.resource
	if !collection {
		target += "/" + fmt.Sprintf("obj-%d", g.rng.IntN(3))
	}
	if subresource != "" {
		target += "/" + subresource
	}
	method := map[string]string{"get": http.MethodGet, "list": http.MethodGet, "watch": http.MethodGet,
		"create": http.MethodPost, "update": http.MethodPut, "patch": http.MethodPatch, "delete": http.MethodDelete,
		"deletecollection": http.MethodDelete}[verb]
	if verb == "watch" {
		target += "?watch=true"
	}
	return call{id: id, method: method, target: target}
}
