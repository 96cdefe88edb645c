package troubleshooting_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
)

// identity is who makes a generated request (kubectl's --as and --as-group).
type identity struct {
	user   string
	groups []string
	// readOnly keeps the identity to reads (GET): system:masters is authorized for everything,
	// and its writes would change the cluster. noDelete keeps it from DELETE: kube-apiserver's
	// bootstrap RBAC authorizes the control-plane identities for some deletions.
	readOnly, noDelete bool
}

var identities = []identity{
	{user: "alice"},
	{user: "bob", groups: []string{"team-a"}},
	{user: "tenant-ci", groups: []string{"tenants"}}, // the tenant configuration's group
	{user: "system:serviceaccount:team-a:builder"},
	{user: "system:serviceaccount:kube-system:job-controller"},
	{user: "system:serviceaccount:team-a:deployer", groups: []string{"tenants"}},
	{user: "system:node:node-1", groups: []string{"system:nodes"}, noDelete: true},
	{user: "system:kube-controller-manager", noDelete: true},
	{user: "system:kube-scheduler", noDelete: true},
	{user: "system:anonymous"},
	{user: "root", groups: []string{"system:masters"}, readOnly: true},
}

// kind is a resource the generator requests: its URL prefix and scope.
type kind struct {
	resource, group, version string
	namespaced               bool
	subresources             []string
}

var kinds = []kind{
	{resource: "pods", version: "v1", namespaced: true, subresources: []string{"status", "log"}},
	{resource: "configmaps", version: "v1", namespaced: true},
	{resource: "events", version: "v1", namespaced: true},
	{resource: "deployments", group: "apps", version: "v1", namespaced: true, subresources: []string{"scale", "status"}},
	{resource: "leases", group: "coordination.k8s.io", version: "v1", namespaced: true},
	{resource: "nodes", version: "v1", subresources: []string{"status"}},
	{resource: "namespaces", version: "v1"},
	{resource: "flowschemas", group: "flowcontrol.apiserver.k8s.io", version: "v1"},
}

var (
	namespaces       = []string{"team-a", "t-1", "kube-system", "default"}
	nonResourcePaths = []string{"/healthz", "/livez", "/readyz", "/version", "/metrics", "/openapi/v2", "/apis", "/healthz/etcd"}
	// verbs with the HTTP method, whether they name an object, and the query they add.
	verbs = []struct {
		verb, method string
		named        bool
		query        string
	}{
		{"get", http.MethodGet, true, ""}, {"list", http.MethodGet, false, ""}, {"watch", http.MethodGet, false, "watch=1"},
		{"create", http.MethodPost, false, ""}, {"update", http.MethodPut, true, ""}, {"patch", http.MethodPatch, true, ""},
		{"delete", http.MethodDelete, true, ""}, {"deletecollection", http.MethodDelete, false, ""},
	}
	nonResourceMethods = []string{http.MethodGet, http.MethodGet, http.MethodPost, http.MethodHead, http.MethodPut}
)

// generated is one request: the explain flags and the HTTP request that makes it.
type generated struct {
	who                identity
	verb               string
	resource           string // explain's --resource: RESOURCE[.GROUP][/SUB]
	namespace, name    string
	path               string // non-resource path, or the resource request's URL path
	method, query      string
	nonResource        bool
	expectUnclassified bool
}

func (g *generated) String() string {
	who := g.who.user
	if len(g.who.groups) > 0 {
		who += " (" + strings.Join(g.who.groups, ",") + ")"
	}
	if g.nonResource {
		return fmt.Sprintf("%s %s %s", who, g.method, g.path)
	}
	return fmt.Sprintf("%s %s %s ns=%q name=%q (%s %s)", who, g.verb, g.resource, g.namespace, g.name, g.method, g.path)
}

// generate returns n requests drawn deterministically from seed: resource requests on core and
// grouped resources, subresources, namespaced and cluster-scoped, and non-resource requests.
func generate(seed uint64, n int) []generated {
	r := rand.New(rand.NewPCG(seed, seed))
	out := make([]generated, 0, n)
	for len(out) < n {
		who := identities[r.IntN(len(identities))]
		if r.IntN(5) == 0 {
			m := nonResourceMethods[r.IntN(len(nonResourceMethods))]
			if who.readOnly && m != http.MethodGet && m != http.MethodHead {
				continue
			}
			out = append(out, generated{who: who, nonResource: true, method: m, verb: strings.ToLower(m),
				path: nonResourcePaths[r.IntN(len(nonResourcePaths))]})
			continue
		}
		if g, ok := resourceRequest(r, who); ok {
			out = append(out, g)
		}
	}
	return out
}

// resourceRequest draws a resource request for who; false when the draw is not a request
// kube-apiserver would take as drawn (a subresource of a collection, a write by system:masters).
func resourceRequest(r *rand.Rand, who identity) (generated, bool) {
	k := kinds[r.IntN(len(kinds))]
	v := verbs[r.IntN(len(verbs))]
	if (who.readOnly && v.method != http.MethodGet) || (who.noDelete && v.method == http.MethodDelete) {
		return generated{}, false
	}
	g := generated{who: who, verb: v.verb, method: v.method, query: v.query, resource: k.resource}
	if k.group != "" {
		g.resource += "." + k.group
	}
	prefix := "/api/" + k.version
	if k.group != "" {
		prefix = "/apis/" + k.group + "/" + k.version
	}
	if k.namespaced {
		g.namespace = namespaces[r.IntN(len(namespaces))]
		prefix += "/namespaces/" + g.namespace
	}
	g.path = prefix + "/" + k.resource
	if v.named {
		g.name = fmt.Sprintf("obj-%d", r.IntN(3))
		g.path += "/" + g.name
		if k.resource == "namespaces" {
			g.namespace = g.name // kube-apiserver's request info: /api/v1/namespaces/NAME is in namespace NAME
		}
	}
	if len(k.subresources) > 0 && v.named && r.IntN(2) == 0 {
		sub := k.subresources[r.IntN(len(k.subresources))]
		if sub == "log" && v.verb != "get" {
			return generated{}, false
		}
		g.resource += "/" + sub
		g.path += "/" + sub
		g.expectUnclassified = sub == "log" // kube-apiserver serves logs unclassified
	}
	return g, true
}
