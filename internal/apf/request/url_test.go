package request

import (
	"net/url"
	"strconv"
	"strings"
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

// referenceParse is a direct transcription of k8s.io/apiserver's RequestInfoFactory
// (strings.Split, url.ParseQuery), used to check ParseURL.
func referenceParse(method, path, rawQuery string) Attributes {
	a := Attributes{Verb: strings.ToLower(method), Path: path}
	trimmed := strings.Trim(path, "/")
	var parts []string
	if trimmed != "" {
		parts = strings.Split(trimmed, "/")
	}
	if len(parts) < 3 || (parts[0] != "api" && parts[0] != "apis") {
		return a
	}
	prefix := parts[0]
	parts = parts[1:]
	group := ""
	if prefix == "apis" {
		if len(parts) < 3 {
			return a
		}
		group, parts = parts[0], parts[1:]
	}
	parts = parts[1:] // version
	var verb string
	if parts[0] == "watch" || parts[0] == "proxy" {
		if len(parts) < 2 {
			return a
		}
		verb, parts = parts[0], parts[1:]
	} else {
		verb = map[string]string{"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update",
			"PATCH": "patch", "DELETE": "delete"}[method]
	}
	r := Attributes{Verb: verb, APIGroup: group, ResourceRequest: true}
	if parts[0] == "namespaces" && len(parts) > 1 {
		r.Namespace = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	r.Resource = parts[0]
	if len(parts) >= 2 {
		r.Name = parts[1]
	}
	if len(parts) >= 3 && verb != "proxy" {
		r.Subresource = parts[2]
	}
	q, _ := url.ParseQuery(rawQuery)
	first := func(k string) (string, bool) { v, ok := q[k]; return strings.Join(v[:min(1, len(v))], ""), ok }
	if r.Name == "" && r.Verb == "get" {
		r.Verb = "list"
		if w, ok := first("watch"); ok {
			if b, err := strconv.ParseBool(w); err == nil && b {
				r.Verb = "watch"
			}
		}
		if fs, ok := first("fieldSelector"); ok {
			for _, term := range strings.Split(fs, ",") {
				k, v, found := strings.Cut(term, "=")
				if found && strings.TrimSpace(k) == "metadata.name" {
					v = strings.TrimPrefix(v, "=")
					if v != "" && v != "." && v != ".." && !strings.ContainsAny(v, "/%") {
						r.Name = v
					}
					break
				}
			}
		}
	}
	if r.Name == "" && r.Verb == "delete" {
		r.Verb = "deletecollection"
	}
	if r.Subresource == "log" {
		if f, ok := first("follow"); ok {
			b, err := strconv.ParseBool(f)
			r.LongRunning = err == nil && b
		}
	}
	return r
}

func FuzzParseURL(f *testing.F) {
	seeds := [][3]string{
		{"GET", "/api/v1/namespaces/default/pods", "watch=true"},
		{"GET", "/apis/apps/v1/watch/namespaces/x/deployments/y", ""},
		{"DELETE", "/api/v1/namespaces/x/pods", ""},
		{"GET", "/api/v1/namespaces/x/pods/p/log", "follow=1"},
		{"GET", "/api/v1/proxy/nodes/n/a/b/c/d/e/f/g", ""},
		{"PUT", "/api/v1/namespaces/ns/finalize", ""},
		{"GET", "//api//v1//pods", "fieldSelector=metadata.name%3D%3Dx"},
		{"POST", "/healthz", ""},
		{"GET", "/apis/g/v/proxy", ""},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, method, path, rawQuery string) {
		if strings.ContainsAny(rawQuery, ";") {
			return // url.ParseQuery rejects ';', a server never sees it
		}
		if _, err := url.ParseQuery(rawQuery); err != nil {
			return // the reference drops malformed pairs; ParseURL reads them raw
		}
		var got Attributes
		ParseURL(method, path, rawQuery, &got)
		want := referenceParse(method, path, rawQuery)
		if !want.ResourceRequest {
			// A non-resource verb of an exotic method is lower-cased the same way.
			want.Verb = strings.ToLower(method)
		}
		if !equalAttributes(got, want) {
			t.Fatalf("ParseURL(%q, %q, %q):\n got %+v\nwant %+v", method, path, rawQuery, got, want)
		}
		if got.ResourceRequest && got.Path != "" || !got.ResourceRequest && got.Resource != "" {
			t.Fatalf("absent attributes are set: %+v", got)
		}
	})
}
