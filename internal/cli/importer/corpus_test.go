package importer

import (
	"math/rand/v2"

	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// Value pools of the request corpus: the names the native rules under test use, and near
// misses (a prefix without its separator, a longer path, another namespace).
var (
	corpusUsers = []string{"system:kube-controller-manager", "system:kube-scheduler", "alice", "bob", "carol",
		"system:anonymous", "system:node:node-1", "*", "system:serviceaccount:kube-system:generic-garbage-collector",
		"system:serviceaccount:kube-system:", "system:serviceaccount:kube-system", "system:serviceaccount:kube-system:a:b",
		"system:serviceaccount:kube-system-x:a", "system:serviceaccount:default:builder",
		"system:serviceaccount:ci:deployer", "system:serviceaccount:ci:other", "system:serviceaccount:cix:deployer"}
	corpusGroups = []string{"system:nodes", "system:serviceaccounts", "system:serviceaccounts:kube-system",
		"system:masters", "ops", "devs", "*"}
	resourceVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "proxy"}
	corpusAPIs    = []string{"", "", "apps", "coordination.k8s.io", "batch", "example.com"}
	corpusRes     = []string{"pods", "nodes", "leases", "endpoints", "configmaps", "deployments", "events", "namespaces", "*"}
	corpusSubs    = []string{"", "", "", "status", "log", "scale", "exec"}
	corpusNS      = []string{"", "", "default", "kube-system", "kube-public", "tenant-a", "ci", "*"}
	// corpusPairs are realistic apiGroup/resource pairs, drawn for half the resource requests.
	corpusPairs = [][2]string{{"coordination.k8s.io", "leases"}, {"", "nodes"}, {"", "pods"}, {"apps", "deployments"},
		{"", "configmaps"}, {"", "endpoints"}}
	corpusMethods = []string{"get", "get", "post", "put", "delete", "patch", "head", "options"}
	corpusPaths   = []string{"/healthz", "/healthz/etcd", "/healthzz", "/readyz", "/livez", "/livez/ping", "/metrics",
		"/metrics/x", "/api", "/api/v1", "/apis", "/version", "/", "", "/openapi/v2", "/x", "/x/", "/x/y", "/xy", "/logs",
		"/logs/a", "/logsx", "/debug/pprof"}
)

// requestCorpus returns an enumeration of the requests the native rules under test tell
// apart (every user with a few verbs, each realistic apiGroup/resource pair, subresources and
// namespaces; every user with two methods on every path), followed by n requests drawn from
// the pools with a fixed seed. Every request is authenticated or not, as kube-apiserver's
// authenticators ensure.
func requestCorpus(n int) []request.Attributes {
	out := enumeratedRequests()
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		out = append(out, randomRequest(r))
	}
	return out
}

func enumeratedRequests() []request.Attributes {
	var out []request.Attributes
	for i, user := range corpusUsers {
		groups := baseGroups(user)
		groups = append(groups, corpusGroups[i%len(corpusGroups)])
		for _, verb := range []string{"get", "update", "list"} {
			for _, pair := range corpusPairs {
				for _, sub := range []string{"", "status", "log"} {
					for _, ns := range []string{"", "kube-system", "tenant-a", "default"} {
						out = append(out, request.Attributes{User: user, Groups: groups, ResourceRequest: true, Verb: verb,
							APIGroup: pair[0], Resource: pair[1], Subresource: sub, Namespace: ns})
					}
				}
			}
		}
		for _, method := range []string{"get", "post"} {
			for _, path := range corpusPaths {
				out = append(out, request.Attributes{User: user, Groups: groups, Verb: method, Path: path})
			}
		}
	}
	return out
}

// randomRequest draws a request: two in three are resource requests, half of them on a
// realistic apiGroup/resource pair; the user has up to three more groups.
func randomRequest(r *rand.Rand) request.Attributes {
	pick := func(pool []string) string { return pool[r.IntN(len(pool))] }
	a := request.Attributes{User: pick(corpusUsers)}
	a.Groups = baseGroups(a.User)
	for range r.IntN(4) {
		a.Groups = append(a.Groups, pick(corpusGroups))
	}
	if r.IntN(3) == 0 {
		a.Verb, a.Path = pick(corpusMethods), pick(corpusPaths)
		return a
	}
	a.ResourceRequest, a.Verb, a.APIGroup = true, pick(resourceVerbs), pick(corpusAPIs)
	a.Resource, a.Subresource, a.Namespace = pick(corpusRes), pick(corpusSubs), pick(corpusNS)
	if r.IntN(2) == 0 {
		pair := corpusPairs[r.IntN(len(corpusPairs))]
		a.APIGroup, a.Resource = pair[0], pair[1]
	}
	return a
}

// baseGroups is system:unauthenticated for the anonymous user, else system:authenticated.
func baseGroups(user string) []string {
	if user == "system:anonymous" {
		return []string{"system:unauthenticated"}
	}
	return []string{"system:authenticated"}
}
