package request

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/sets"
	upstream "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"
)

// The oracle logs every query it cannot decode.
func init() { klog.SetLogger(logr.Discard()) }

// This file checks ParseURL against its oracle, kube-apiserver's own request parsing
// (k8s.io/apiserver's RequestInfoFactory, called directly, configured as kube-apiserver
// configures it), field by field, on generated requests: every method kube-apiserver
// distinguishes and others (OPTIONS, TRACE, custom and lower-case ones), paths with empty
// segments and trailing slashes, ?watch variants (watch, watch=, watch=yes, watch=0,
// watch=false, repeated, malformed), selectors, limits and timeouts that decode or not.

var oracle = &upstream.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api")}

// upstreamParse is the oracle's reading of a request as Attributes, and false when
// kube-apiserver rejects the request before flow control (its request-info filter answers 500).
func upstreamParse(method, path, rawQuery string) (Attributes, bool) {
	info, err := oracle.NewRequestInfo(&http.Request{Method: method, URL: &url.URL{Path: path, RawQuery: rawQuery}})
	if err != nil {
		return Attributes{}, false
	}
	if !info.IsResourceRequest {
		return Attributes{Verb: info.Verb, Path: info.Path}, true
	}
	return Attributes{Verb: info.Verb, APIGroup: info.APIGroup, Resource: info.Resource, Subresource: info.Subresource,
		Namespace: info.Namespace, Name: info.Name, ResourceRequest: true}, true
}

// checkAgainstOracle reports how ParseURL and the oracle differ on one request, or "".
func checkAgainstOracle(method, path, rawQuery string) string {
	var got Attributes
	ParseURL(method, path, rawQuery, &got)
	got.LongRunning = false // not a RequestInfo field
	want, classified := upstreamParse(method, path, rawQuery)
	switch {
	case !classified && got.ResourceRequest:
		return fmt.Sprintf("kube-apiserver rejects it before flow control, ParseURL reads %+v", got)
	case !classified:
		return ""
	case !equalAttributes(got, want):
		return fmt.Sprintf("got %+v\nwant %+v", got, want)
	}
	return ""
}

var (
	genMethods = []string{"GET", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND",
		"CONNECT", "LIST", "WATCH", "get", "Delete"}
	genPrefixes = []string{"/api/v1", "/apis/apps/v1", "/apis//v1", "/api//", "/apis/apps", "//api/v1", "/api", "/apis",
		"/api/v1/", "", "/healthz", "/openapi/v2", "/version"}
	genSegments = []string{"", "", "watch", "proxy", "namespaces", "ns1", "status", "finalize", "pods", "deployments",
		"web", "log", "scale", "exec", ".", "..", "a b", "%2F"}
	genParams = []string{"watch", "watch=", "watch=yes", "watch=0", "watch=false", "watch=FALSE", "watch=true", "watch=1",
		"watch=no", "watch=fal%C5%BFe", "watch=%zz", "wat%63h=1", "watch;x=1", "watch=false;", "watch=t+rue", "",
		"fieldSelector=metadata.name%3Dweb", "fieldSelector=metadata.name%3D%3Dweb", "fieldSelector=metadata.name!%3Dweb",
		"fieldSelector=spec.nodeName%3Dn1,metadata.name%3Dweb", "fieldSelector=metadata.name%3Da%2Fb",
		"fieldSelector=metadata.name%3D..", "fieldSelector=metadata.name%3D", "fieldSelector=bad", "fieldSelector=",
		"fieldSelector=metadata.name%3Dx\\,y", "labelSelector=app%3Dweb", "labelSelector=!!!", "labelSelector=",
		"limit=500", "limit=x", "limit=", "timeoutSeconds=30", "timeoutSeconds=30s", "resourceVersion=0",
		"allowWatchBookmarks=true", "sendInitialEvents=maybe", "follow=true"}
)

// genRequest is a generated method, path and raw query.
func genRequest(r *rand.Rand) (method, path, rawQuery string) {
	method = genMethods[r.IntN(len(genMethods))]
	var b strings.Builder
	b.WriteString(genPrefixes[r.IntN(len(genPrefixes))])
	for range r.IntN(6) {
		b.WriteString("/" + genSegments[r.IntN(len(genSegments))])
	}
	if r.IntN(4) == 0 {
		b.WriteString("/")
	}
	params := make([]string, r.IntN(4))
	for i := range params {
		params[i] = genParams[r.IntN(len(genParams))]
	}
	return method, b.String(), strings.Join(params, "&")
}

// TestParseURLAgreesWithKubeAPIServer is the differential test: 0 mismatches with
// RequestInfoFactory on every generated request.
func TestParseURLAgreesWithKubeAPIServer(t *testing.T) {
	const n = 50000
	r := rand.New(rand.NewPCG(24, 4))
	var resource, emptyVerb, emptySegment, watches, rejected int
	for range n {
		method, path, rawQuery := genRequest(r)
		if diff := checkAgainstOracle(method, path, rawQuery); diff != "" {
			t.Fatalf("%s %s ? %s:\n%s", method, path, rawQuery, diff)
		}
		want, ok := upstreamParse(method, path, rawQuery)
		switch {
		case !ok:
			rejected++
		case want.ResourceRequest:
			resource++
			if want.Verb == "" {
				emptyVerb++
			}
			if want.Resource == "" || want.Namespace == "" && strings.Contains(path, "namespaces//") {
				emptySegment++
			}
			if want.Verb == VerbWatch && strings.Contains(rawQuery, "watch") {
				watches++
			}
		}
	}
	t.Logf("%d requests, 0 mismatches: %d resource requests (%d with verb \"\", %d with an empty resource or namespace "+
		"segment, %d watches by query), %d rejected by kube-apiserver before flow control", n, resource, emptyVerb,
		emptySegment, watches, rejected)
	if emptyVerb < n/50 || emptySegment < n/50 || watches < n/100 {
		t.Fatalf("the generator misses the request classes it is for")
	}
}

// TestParseURLWatchVariants pins kube-apiserver's reading of ?watch on a collection GET.
func TestParseURLWatchVariants(t *testing.T) {
	for q, want := range map[string]string{"watch": "watch", "watch=": "watch", "watch=yes": "watch", "watch=1": "watch",
		"watch=true": "watch", "watch=0": "list", "watch=false": "list", "watch=FALSE": "list",
		"watch=false&watch=true": "list", "watch=true&watch=false": "watch", "watch;x=1": "list", "watch=%zz": "list",
		"watch=%zz&watch=1": "watch", "": "list",
		// a query that does not decode: "false" and "0" only after lower-casing
		"watch=fal%C5%BFe": "list", "watch=fal%C5%BFe&limit=x": "watch", "watch=FALSE&limit=x": "list"} {
		var a Attributes
		ParseURL("GET", "/api/v1/pods", q, &a)
		if a.Verb != want {
			t.Errorf("?%s: verb %q, want %q", q, a.Verb, want)
		}
		if diff := checkAgainstOracle("GET", "/api/v1/pods", q); diff != "" {
			t.Errorf("?%s: %s", q, diff)
		}
	}
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
		{"OPTIONS", "/api/v1//pods", "watch"},
		{"GET", "/api/v1/pods", "watch=yes&limit=x"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, method, path, rawQuery string) {
		if diff := checkAgainstOracle(method, path, rawQuery); diff != "" {
			t.Fatalf("ParseURL(%q, %q, %q):\n%s", method, path, rawQuery, diff)
		}
	})
}
