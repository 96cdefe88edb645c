package request

import (
	"net/url"
	"testing"
)

func TestParseURL(t *testing.T) {
	res := func(verb, group, resource, sub, ns, name string) Attributes {
		return Attributes{Verb: verb, APIGroup: group, Resource: resource, Subresource: sub,
			Namespace: ns, Name: name, ResourceRequest: true}
	}
	cases := []struct {
		method, url string
		want        Attributes
	}{
		{"GET", "/api/v1/namespaces/default/pods", res("list", "", "pods", "", "default", "")},
		{"GET", "/api/v1/namespaces/default/pods?watch=true", res("watch", "", "pods", "", "default", "")},
		{"GET", "/api/v1/namespaces/default/pods?watch=1&resourceVersion=5", res("watch", "", "pods", "", "default", "")},
		{"GET", "/api/v1/namespaces/default/pods?watch=false", res("list", "", "pods", "", "default", "")},
		{"GET", "/api/v1/watch/namespaces/default/pods", res("watch", "", "pods", "", "default", "")},
		{"GET", "/api/v1/watch/namespaces/default/pods/web", res("watch", "", "pods", "", "default", "web")},
		{"GET", "/api/v1/namespaces/default/pods/web", res("get", "", "pods", "", "default", "web")},
		{"HEAD", "/api/v1/namespaces/default/pods/web", res("get", "", "pods", "", "default", "web")},
		{"POST", "/api/v1/namespaces/default/pods", res("create", "", "pods", "", "default", "")},
		{"PUT", "/api/v1/namespaces/default/pods/web", res("update", "", "pods", "", "default", "web")},
		{"PATCH", "/api/v1/namespaces/default/pods/web/status", res("patch", "", "pods", "status", "default", "web")},
		{"DELETE", "/api/v1/namespaces/default/pods/web", res("delete", "", "pods", "", "default", "web")},
		{"DELETE", "/api/v1/namespaces/default/pods", res("deletecollection", "", "pods", "", "default", "")},
		{"GET", "/api/v1/nodes", res("list", "", "nodes", "", "", "")},
		{"PUT", "/api/v1/nodes/node-1/status", res("update", "", "nodes", "status", "", "node-1")},
		{"GET", "/api/v1/namespaces", res("list", "", "namespaces", "", "", "")},
		{"GET", "/api/v1/namespaces/kube-system", res("get", "", "namespaces", "", "kube-system", "kube-system")},
		{"PUT", "/api/v1/namespaces/ns1/finalize", res("update", "", "namespaces", "finalize", "ns1", "ns1")},
		{"GET", "/api/v1/namespaces/ns1/status", res("get", "", "namespaces", "status", "ns1", "ns1")},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1",
			res("update", "coordination.k8s.io", "leases", "", "kube-node-lease", "node-1")},
		{"GET", "/apis/apps/v1/deployments", res("list", "apps", "deployments", "", "", "")},
		{"GET", "/apis/apps/v1/watch/deployments", res("watch", "apps", "deployments", "", "", "")},
		{"POST", "/api/v1/namespaces/default/pods/web/exec?command=ls", res("create", "", "pods", "exec", "default", "web")},
		{"GET", "/api/v1/namespaces/default/pods/web/attach", res("get", "", "pods", "attach", "default", "web")},
		{"POST", "/api/v1/namespaces/default/pods/web/portforward", res("create", "", "pods", "portforward", "default", "web")},
		{"GET", "/api/v1/namespaces/default/pods/web/proxy/metrics", res("get", "", "pods", "proxy", "default", "web")},
		{"GET", "/api/v1/proxy/namespaces/default/pods/web/metrics", res("proxy", "", "pods", "", "default", "web")},
		{"GET", "/api/v1/namespaces/default/pods/web/log", res("get", "", "pods", "log", "default", "web")},
		{"GET", "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Dweb", res("list", "", "pods", "", "default", "web")},
		{"GET", "/api/v1/namespaces/default/pods?watch=true&fieldSelector=spec.nodeName%3Dn1,metadata.name%3D%3Dweb",
			res("watch", "", "pods", "", "default", "web")},
		{"GET", "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3D..", res("list", "", "pods", "", "default", "")},
		{"OPTIONS", "/api/v1/pods", res("", "", "pods", "", "", "")},
		// Non-resource requests: the path and the lower-case method.
		{"GET", "/healthz", Attributes{Verb: "get", Path: "/healthz"}},
		{"GET", "/", Attributes{Verb: "get", Path: "/"}},
		{"GET", "/api", Attributes{Verb: "get", Path: "/api"}},
		{"GET", "/api/v1", Attributes{Verb: "get", Path: "/api/v1"}},
		{"GET", "/apis/apps/v1", Attributes{Verb: "get", Path: "/apis/apps/v1"}},
		{"POST", "/openapi/v3/apis/apps/v1", Attributes{Verb: "post", Path: "/openapi/v3/apis/apps/v1"}},
		{"HEAD", "/livez", Attributes{Verb: "head", Path: "/livez"}},
		{"MKCOL", "/metrics", Attributes{Verb: "mkcol", Path: "/metrics"}},
		// /watch/ or /proxy/ with nothing after it is malformed: not a resource request.
		{"GET", "/api/v1/watch", Attributes{Verb: "get", Path: "/api/v1/watch"}},
		{"GET", "/apis/apps/v1/proxy/", Attributes{Verb: "get", Path: "/apis/apps/v1/proxy/"}},
	}
	for _, c := range cases {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		var got Attributes
		got.User = "stale"
		ParseURL(c.method, u.Path, u.RawQuery, &got)
		if !equalAttributes(got, c.want) {
			t.Errorf("%s %s:\n got %+v\nwant %+v", c.method, c.url, got, c.want)
		}
	}
}

func TestParseURLLongRunning(t *testing.T) {
	cases := []struct {
		method, url string
		want        bool
	}{
		{"GET", "/api/v1/namespaces/default/pods?watch=true", true},
		{"GET", "/api/v1/watch/pods", true},
		{"GET", "/api/v1/proxy/nodes/n1/stats", true},
		{"GET", "/api/v1/nodes/n1/proxy/stats", true},
		{"POST", "/api/v1/namespaces/default/pods/web/exec", true},
		{"POST", "/api/v1/namespaces/default/pods/web/attach", true},
		{"POST", "/api/v1/namespaces/default/pods/web/portforward", true},
		{"GET", "/api/v1/namespaces/default/pods/web/log?follow=true", true},
		{"GET", "/api/v1/namespaces/default/pods/web/log?follow=false", false},
		{"GET", "/api/v1/namespaces/default/pods/web/log", false},
		{"GET", "/api/v1/namespaces/default/pods", false},
		{"PUT", "/api/v1/namespaces/default/pods/web", false},
		{"GET", "/healthz?watch=true", false},
	}
	for _, c := range cases {
		u, _ := url.Parse(c.url)
		var a Attributes
		ParseURL(c.method, u.Path, u.RawQuery, &a)
		if a.IsLongRunning() != c.want {
			t.Errorf("%s %s: IsLongRunning = %v, want %v (%+v)", c.method, c.url, !c.want, c.want, a)
		}
	}
}

func TestIsReadOnly(t *testing.T) {
	for verb, want := range map[string]bool{"get": true, "list": true, "watch": true, "create": false,
		"update": false, "patch": false, "delete": false, "deletecollection": false, "post": false, "": false} {
		a := Attributes{Verb: verb}
		if a.IsReadOnly() != want {
			t.Errorf("IsReadOnly(%q) = %v, want %v", verb, !want, want)
		}
	}
}

func TestParseURLAllocatesNothing(t *testing.T) {
	var a Attributes
	allocs := testing.AllocsPerRun(100, func() {
		ParseURL("GET", "/apis/apps/v1/namespaces/team-a/deployments/web/status", "watch=true&timeout=5s", &a)
		ParseURL("GET", "/api/v1/namespaces/team-a/pods", "watch=1", &a)
		ParseURL("GET", "/api/v1/namespaces/team-a/pods", "labelSelector=app%3Dweb&limit=500", &a)
		ParseURL("GET", "/healthz", "", &a)
	})
	if allocs != 0 {
		t.Fatalf("ParseURL allocates %.0f times per call set; want 0", allocs)
	}
}

func equalAttributes(a, b Attributes) bool {
	return a.User == b.User && len(a.Groups) == len(b.Groups) && a.Verb == b.Verb &&
		a.APIGroup == b.APIGroup && a.Resource == b.Resource && a.Subresource == b.Subresource &&
		a.Namespace == b.Namespace && a.Name == b.Name && a.Path == b.Path &&
		a.ResourceRequest == b.ResourceRequest && a.LongRunning == b.LongRunning
}
