package native

import (
	"slices"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/native/nativetest"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

func TestPathMatches(t *testing.T) {
	cases := []struct {
		url, path string
		want      bool
	}{
		{"/healthz", "/healthz", true}, {"/healthz", "/healthz/etcd", true}, {"/healthz", "/healthzz", false},
		{"/healthz/*", "/healthz", false}, {"/healthz/*", "/healthz/", true}, {"/healthz/*", "/healthz/x/y", true},
		{"*", "/anything", true}, {"/", "/x", true},
	}
	for _, c := range cases {
		if got := pathMatches([]string{c.url}, c.path); got != c.want {
			t.Errorf("pathMatches(%q, %q) = %v, want %v", c.url, c.path, got, c.want)
		}
	}
}

// TestMatchesBootstrapSchemas: on kube-apiserver's bootstrap objects, kube-apiserver's own
// controller picks the expected FlowSchema, and Matches accepts the request for it; a request
// with no group at all matches none (Matches agrees) and falls back to catch-all.
func TestMatchesBootstrapSchemas(t *testing.T) {
	schemas := bootstrapset.FlowSchemas()
	kube := nativetest.Start(t, bootstrapset.PriorityLevels(), schemas)
	defer kube.Close()
	cases := []struct {
		attrs request.Attributes
		want  string
	}{
		{request.Attributes{User: "root", Groups: []string{"system:masters"}, Verb: "get", ResourceRequest: true, Resource: "pods", Namespace: "a"}, "exempt"},
		{request.Attributes{User: "x", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/healthz"}, "probes"},
		{request.Attributes{User: "x", Groups: []string{"system:authenticated"}, Verb: "post", Path: "/healthz"}, "global-default"},
		{request.Attributes{User: "system:kube-scheduler", Groups: []string{"system:authenticated"}, Verb: "get", ResourceRequest: true,
			APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system"}, "system-leader-election"},
		{request.Attributes{User: "system:serviceaccount:kube-system:gc", Groups: []string{"system:serviceaccounts", "system:authenticated"},
			Verb: "list", ResourceRequest: true, Resource: "pods", Namespace: "a"}, "kube-system-service-accounts"},
		{request.Attributes{User: "system:serviceaccount:team:bot", Groups: []string{"system:serviceaccounts", "system:authenticated"},
			Verb: "list", ResourceRequest: true, Resource: "pods", Namespace: "a"}, "service-accounts"},
		{request.Attributes{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, Verb: "get", Path: "/x"}, "global-default"},
		{request.Attributes{User: "nobody", Verb: "get", Path: "/x"}, ""}, // no group at all: no schema
	}
	for _, c := range cases {
		picked := kube.Pick(&c.attrs)
		var matching []string
		for i := range schemas {
			if Matches(&schemas[i], &c.attrs) {
				matching = append(matching, schemas[i].Name)
			}
		}
		switch {
		case c.want == "" && (picked != flowcontrolv1.FlowSchemaNameCatchAll || len(matching) > 0):
			t.Errorf("%+v: kube-apiserver picks %s, Matches accepts %v; want the fallback to catch-all, no match", c.attrs, picked, matching)
		case c.want != "" && (picked != c.want || !slices.Contains(matching, c.want)):
			t.Errorf("%+v: kube-apiserver picks %s, Matches accepts %v; want %s", c.attrs, picked, matching, c.want)
		}
	}
}

func TestSubjectMatchesServiceAccounts(t *testing.T) {
	sa := func(ns, name string) *flowcontrolv1.Subject {
		return &flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount,
			ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: ns, Name: name}}
	}
	a := &request.Attributes{User: "system:serviceaccount:ns:bot"}
	if !subjectMatches(sa("ns", "*"), a) || !subjectMatches(sa("ns", "bot"), a) || subjectMatches(sa("ns", "other"), a) ||
		subjectMatches(sa("n", "*"), a) {
		t.Error("service account subjects do not match by user name as kube-apiserver does")
	}
}

func TestClassified(t *testing.T) {
	for _, c := range []struct {
		a    request.Attributes
		want bool
	}{
		{request.Attributes{ResourceRequest: true, Verb: "get", Resource: "pods", Subresource: "log"}, false},
		{request.Attributes{ResourceRequest: true, Verb: "create", Resource: "pods", Subresource: "exec"}, false},
		{request.Attributes{ResourceRequest: true, Verb: "watch", Resource: "pods"}, true},
		{request.Attributes{ResourceRequest: true, Verb: "get", Resource: "pods", Subresource: "status"}, true},
		{request.Attributes{Verb: "get", Path: "/debug/pprof/heap"}, false},
		{request.Attributes{Verb: "get", Path: "/version"}, true},
	} {
		if got := Classified(&c.a); got != c.want {
			t.Errorf("Classified(%+v) = %v, want %v", c.a, got, c.want)
		}
	}
}
