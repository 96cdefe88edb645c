package classify_test

import (
	"fmt"
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/apf/shufflesharding"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

// want is the expected classification of one request.
type want struct {
	schema, priority string
	conjunction      int
	distinguisher    string
	width            int
	longRunning      bool
}

func check(t *testing.T, c *classify.Classifier, name string, a *request.Attributes, w want) {
	t.Helper()
	var r classify.Result
	c.Classify(a, &r)
	got := want{r.Schema.Name, r.Schema.Priority.Name, r.Conjunction, r.Distinguisher, r.Width, r.LongRunning}
	if got != w {
		t.Errorf("%s:\n got %+v\nwant %+v", name, got, w)
	}
	if h := shufflesharding.Hash(r.Schema.Name, r.Distinguisher); r.FlowHash != h {
		t.Errorf("%s: FlowHash = %#x, want Hash(%q, %q) = %#x", name, r.FlowHash, r.Schema.Name, r.Distinguisher, h)
	}
}

func defaultClassifier(t *testing.T) *classify.Classifier {
	t.Helper()
	cfg := effective.Compute(defaults.RequestPriorities(), defaults.FlowSchemas())
	if len(cfg.Schemas) != 5 {
		t.Fatalf("the default objects give %d FlowSchemas in effect, want 5: %+v", len(cfg.Schemas), cfg.FlowSchemaStatus)
	}
	c := classify.Compile(cfg)
	if len(c.Errors()) > 0 {
		t.Fatalf("Compile(defaults) errors: %v", c.Errors())
	}
	return c
}

func TestClassifyDefaults(t *testing.T) {
	c := defaultClassifier(t)
	authenticated := []string{"system:authenticated"}
	nodes := []string{"system:nodes", "system:authenticated"}
	masters := []string{"system:masters", "system:authenticated"}
	sa := []string{"system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"}

	check(t, c, "node heartbeat (node status)", attrs("system:node:n1", nodes, "PATCH", "/api/v1/nodes/n1/status"),
		want{"system-high", "system-high", 0, "system:node:n1", 2, false})
	check(t, c, "kubelet reading a kube-system config map",
		attrs("system:node:n1", nodes, "GET", "/api/v1/namespaces/kube-system/configmaps/kube-proxy"),
		want{"system-high", "system-high", 1, "system:node:n1", 1, false})
	check(t, c, "leader election of a system controller",
		attrs("system:controller:endpoint-controller", authenticated, "PUT",
			"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/endpoint-controller"),
		want{"system-high", "system-high", 2, "system:controller:endpoint-controller", 2, false})
	check(t, c, "garbage collector",
		attrs("system:controller:garbage-collector", authenticated, "DELETE", "/api/v1/namespaces/team-a/pods/web"),
		want{"system-low", "system-low", 0, "", 2, false})
	check(t, c, "kubectl user in a namespace",
		attrs("alice", authenticated, "GET", "/api/v1/namespaces/team-a/pods"),
		want{"workload-high", "workload-high", 0, "team-a", 1, false})
	check(t, c, "kubectl user creating a cluster-scoped object",
		attrs("alice", authenticated, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles"),
		want{"workload-high", "workload-high", 0, "", 2, false})
	check(t, c, "service account",
		attrs("system:serviceaccount:team-a:builder", sa, "POST", "/apis/apps/v1/namespaces/team-a/deployments"),
		want{"workload-low", "workload-low", 0, "team-a", 2, false})
	// system:masters goes to the exempt level ahead of every FlowSchema (the implicit schema).
	check(t, c, "system:masters",
		attrs("admin", masters, "DELETE", "/api/v1/namespaces/team-a/pods"),
		want{"system-top", "system-top", -1, "", 2, false})
	check(t, c, "system:masters non-resource",
		attrs("admin", masters, "GET", "/metrics"),
		want{"system-top", "system-top", -1, "", 1, false})
	// Non-resource requests: every default schema below system-top needs a resource (decision 3),
	// so they fall through to the catch-all backstop at the lowest level, distinguished by user.
	check(t, c, "non-resource request by a user",
		attrs("alice", authenticated, "GET", "/healthz"),
		want{"non-top-backstop", "workload-low", -1, "alice", 1, false})
	check(t, c, "non-resource POST by a service account",
		attrs("system:serviceaccount:team-a:builder", sa, "POST", "/openapi/v3"),
		want{"non-top-backstop", "workload-low", -1, "system:serviceaccount:team-a:builder", 2, false})
	// Long-running requests are classified (for the response headers) and flagged.
	check(t, c, "watch by a service account",
		attrs("system:serviceaccount:team-a:builder", sa, "GET", "/api/v1/namespaces/team-a/pods?watch=true"),
		want{"workload-low", "workload-low", 0, "team-a", 1, true})
	check(t, c, "exec by a user",
		attrs("alice", authenticated, "POST", "/api/v1/namespaces/team-a/pods/web/exec"),
		want{"workload-high", "workload-high", 0, "team-a", 2, true})
	check(t, c, "followed log",
		attrs("alice", authenticated, "GET", "/api/v1/namespaces/team-a/pods/web/log?follow=true"),
		want{"workload-high", "workload-high", 0, "team-a", 1, true})
	check(t, c, "port-forward",
		attrs("alice", authenticated, "POST", "/api/v1/namespaces/team-a/pods/web/portforward"),
		want{"workload-high", "workload-high", 0, "team-a", 2, true})
	check(t, c, "proxy",
		attrs("alice", authenticated, "GET", "/api/v1/proxy/namespaces/team-a/services/web/x"),
		want{"workload-high", "workload-high", 0, "team-a", 2, true})
}

func TestClassifyBackstopsOnly(t *testing.T) {
	c := classify.Compile(effective.Compute(nil, nil))
	check(t, c, "system:masters with no FlowSchema", attrs("admin", []string{"system:masters"}, "GET", "/api/v1/pods"),
		want{"system-top", "system-top", -1, "", 1, false})
	check(t, c, "anyone else with no FlowSchema", attrs("bob", nil, "PUT", "/api/v1/namespaces/a/pods/p"),
		want{"non-top-backstop", "workload-low", -1, "bob", 2, false})
	check(t, classify.Compile(nil), "nil config", attrs("bob", nil, "GET", "/healthz"),
		want{"non-top-backstop", "workload-low", -1, "bob", 1, false})
}

func TestClassifyPriorityOrderAndTies(t *testing.T) {
	rps := []flowv1.RequestPriority{rp("top", 0, 0, 0, 0, 0), rp("high", 10, 10, 16, 4, 10), rp("low", 20, 10, 1, 0, 10)}
	all := apitest.And()
	fss := []flowv1.FlowSchema{
		fs("zeta", 100, "low", nil, all),
		fs("beta", 50, "low", nil, apitest.And(apitest.Equals(flowv1.FieldUser, "bob")), all),
		fs("alpha", 50, "high", nil, apitest.And(apitest.Equals(flowv1.FieldUser, "nobody")), apitest.And(apitest.Equals(flowv1.FieldVerb, "list"))),
		fs("broken-ref", 1, "missing", nil, all),
	}
	c := classify.Compile(effective.Compute(rps, fss))
	check(t, c, "tie on matchingPriority broken by name", attrs("bob", nil, "GET", "/api/v1/pods"),
		want{"alpha", "high", 1, "", 1, false})
	check(t, c, "first accepting conjunction of the best schema", attrs("bob", nil, "POST", "/api/v1/namespaces/a/pods"),
		want{"beta", "low", 0, "", 2, false})
	check(t, c, "lower matchingPriority wins", attrs("carol", nil, "POST", "/api/v1/namespaces/a/pods"),
		want{"beta", "low", 1, "", 2, false})
}

func TestClassifyAbsentAttributes(t *testing.T) {
	rps := []flowv1.RequestPriority{rp("low", 20, 10, 16, 4, 10)}
	fss := []flowv1.FlowSchema{
		fs("ns-empty", 1, "low", nil, apitest.And(apitest.Equals(flowv1.FieldNamespace, ""))),
		fs("not-ns-x", 2, "low", nil, apitest.And(apitest.NotEquals(flowv1.FieldNamespace, "x"), apitest.Equals(flowv1.FieldUser, "u2"))),
		fs("not-in-resources", 3, "low", nil, apitest.And(apitest.NotInSet(flowv1.FieldResource, "pods"), apitest.Equals(flowv1.FieldUser, "u3"))),
		fs("path-pattern", 4, "low", nil, apitest.And(apitest.PatternMatch(flowv1.FieldPath, "/healthz|/livez"))),
		fs("not-path", 5, "low", nil, apitest.And(apitest.NotPatternMatch(flowv1.FieldPath, ".*"), apitest.Equals(flowv1.FieldUser, "u5"))),
		fs("name-any", 6, "low", nil, apitest.And(apitest.PatternMatch(flowv1.FieldName, ".*"), apitest.Equals(flowv1.FieldUser, "u6"))),
		fs("subresource-empty", 7, "low", nil, apitest.And(apitest.InSet(flowv1.FieldSubresource, ""), apitest.Equals(flowv1.FieldUser, "u7"))),
	}
	c := classify.Compile(effective.Compute(rps, fss))
	res := func(user, method, path string) *request.Attributes { return attrs(user, nil, method, path) }

	// Cluster-scoped resource request: the namespace is present and empty.
	check(t, c, "equals namespace \"\" on a cluster-scoped request", res("u", "GET", "/api/v1/nodes"),
		want{"ns-empty", "low", 0, "", 1, false})
	// Non-resource request: namespace absent, so equals "" is false and notEquals is true.
	check(t, c, "notEquals namespace on a non-resource request", res("u2", "GET", "/healthz"),
		want{"not-ns-x", "low", 0, "", 1, false})
	check(t, c, "notInSet resource on a non-resource request", res("u3", "GET", "/metrics"),
		want{"not-in-resources", "low", 0, "", 1, false})
	check(t, c, "patternMatch path on a non-resource request", res("u", "GET", "/livez"),
		want{"path-pattern", "low", 0, "", 1, false})
	// Resource request: path absent, so the negation of a pattern on it is true.
	check(t, c, "notPatternMatch path on a resource request", res("u5", "GET", "/api/v1/namespaces/x/pods"),
		want{"not-path", "low", 0, "", 1, false})
	check(t, c, "notPatternMatch path on a non-resource request is false", res("u5", "GET", "/metrics"),
		want{"non-top-backstop", "low", -1, "u5", 1, false})
	check(t, c, "patternMatch .* on an absent name is false", res("u6", "GET", "/metrics"),
		want{"non-top-backstop", "low", -1, "u6", 1, false})
	check(t, c, "patternMatch .* on a present, empty name is true", res("u6", "GET", "/api/v1/namespaces/x/pods"),
		want{"name-any", "low", 0, "", 1, false})
	check(t, c, "inSet [\"\"] on an absent subresource is false", res("u7", "GET", "/metrics"),
		want{"non-top-backstop", "low", -1, "u7", 1, false})
	check(t, c, "inSet [\"\"] on a present, empty subresource is true", res("u7", "GET", "/api/v1/namespaces/x/pods/p"),
		want{"subresource-empty", "low", 0, "", 1, false})
}

func TestClassifyGroupsAndSets(t *testing.T) {
	rps := []flowv1.RequestPriority{rp("low", 20, 10, 16, 4, 10)}
	big := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "pods"}
	fss := []flowv1.FlowSchema{
		fs("both-groups", 1, "low", nil, apitest.And(apitest.SuperSet("system:authenticated", "team-x"))),
		fs("not-team-y", 2, "low", nil, apitest.And(apitest.NotSuperSet("team-y", "team-z"), apitest.Equals(flowv1.FieldVerb, "delete"))),
		fs("big-set", 3, "low", nil, apitest.And(apitest.InSet(flowv1.FieldResource, big...))),
		fs("rest", 4, "low", nil, apitest.And()),
	}
	c := classify.Compile(effective.Compute(rps, fss))
	check(t, c, "superSet needs every listed group", attrs("u", []string{"team-x"}, "GET", "/api/v1/nodes"),
		want{"rest", "low", 0, "", 1, false})
	check(t, c, "superSet with every listed group, repeated", attrs("u", []string{"team-x", "x", "system:authenticated", "team-x"},
		"GET", "/api/v1/nodes"), want{"both-groups", "low", 0, "", 1, false})
	check(t, c, "notSuperSet when one group is missing", attrs("u", []string{"team-y"}, "DELETE", "/api/v1/nodes/n"),
		want{"not-team-y", "low", 0, "", 2, false})
	check(t, c, "notSuperSet false when all are present", attrs("u", []string{"team-z", "team-y"}, "DELETE", "/api/v1/nodes/n"),
		want{"rest", "low", 0, "", 2, false})
	check(t, c, "inSet with a large set", attrs("u", nil, "GET", "/api/v1/namespaces/a/pods"),
		want{"big-set", "low", 0, "", 1, false})
}

func TestClassifyDistinguisherTransformation(t *testing.T) {
	rps := []flowv1.RequestPriority{rp("low", 20, 10, 16, 4, 10)}
	fss := []flowv1.FlowSchema{
		fs("tenants", 1, "low", byUser(`^(tenant-[a-z]+)-.*$`), apitest.And(apitest.PatternMatch(flowv1.FieldUser, "tenant-.*"))),
		fs("optional-group", 2, "low", byUser(`x(y)?z`), apitest.And(apitest.InSet(flowv1.FieldUser, "xz", "xyz", "xyzz"))),
		fs("namespaces", 3, "low", byNamespace(), apitest.And(apitest.Equals(flowv1.FieldResource, "pods"))),
	}
	c := classify.Compile(effective.Compute(rps, fss))
	if len(c.Errors()) > 0 {
		t.Fatal(c.Errors())
	}
	for i := 0; i < 2; i++ { // the second round reads the transformation's cache
		check(t, c, "submatch 1 of a complete match", attrs("tenant-abc-bob", nil, "GET", "/healthz"),
			want{"tenants", "low", 0, "tenant-abc", 1, false})
		check(t, c, "no complete match yields empty", attrs("tenant-abc", nil, "GET", "/healthz"),
			want{"tenants", "low", 0, "", 1, false})
		check(t, c, "submatch 1 present", attrs("xyz", nil, "GET", "/healthz"),
			want{"optional-group", "low", 0, "y", 1, false})
		check(t, c, "submatch 1 did not participate", attrs("xz", nil, "GET", "/healthz"),
			want{"optional-group", "low", 0, "", 1, false})
		check(t, c, "the match is anchored", attrs("xyzz", nil, "GET", "/healthz"),
			want{"optional-group", "low", 0, "", 1, false})
		check(t, c, "namespace distinguisher", attrs("u", nil, "GET", "/api/v1/namespaces/ns-1/pods"),
			want{"namespaces", "low", 0, "ns-1", 1, false})
	}
}

func TestCompileReportsHandBuiltErrors(t *testing.T) {
	cfg := effective.Compute(nil, nil)
	bad := &effective.Schema{Name: "bad", Priority: cfg.CatchAll.Priority, Match: []flowv1.Conjunction{
		apitest.And(apitest.PatternMatch(flowv1.FieldUser, "(")),
		apitest.And(flowv1.AtomicTest{}),
		apitest.And(apitest.SuperSet("g"), flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: flowv1.FieldGroups, Value: "g"}}),
		apitest.And(flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: "color", Value: "red"}}),
	}}
	cfg.Schemas = []*effective.Schema{bad}
	c := classify.Compile(cfg)
	if n := len(c.Errors()); n != 4 {
		t.Fatalf("Errors() = %v; want 4 errors", c.Errors())
	}
	check(t, c, "broken conjunctions match nothing", attrs("u", []string{"g"}, "GET", "/healthz"),
		want{"non-top-backstop", "workload-low", -1, "u", 1, false})
}

func TestClassifyAllocatesNothing(t *testing.T) {
	c := defaultClassifier(t)
	reqs := []*request.Attributes{
		attrs("system:node:n1", []string{"system:nodes", "system:authenticated"}, "PATCH", "/api/v1/nodes/n1/status"),
		attrs("alice", []string{"system:authenticated"}, "GET", "/api/v1/namespaces/team-a/pods"),
		attrs("system:serviceaccount:a:b", []string{"system:serviceaccounts"}, "GET", "/healthz"),
	}
	var r classify.Result
	if n := testing.AllocsPerRun(200, func() {
		for _, a := range reqs {
			c.Classify(a, &r)
		}
	}); n != 0 {
		t.Fatalf("Classify allocates %.1f times per 3 requests; want 0", n)
	}
}

// TestClassifyManyGroups: a request in more indexed groups than any fixed bound gets the best
// schema without allocating, and a superSet found under one of its groups still tests the
// others.
func TestClassifyManyGroups(t *testing.T) {
	rps := []flowv1.RequestPriority{rp("top", 0, 0, 0, 0, 0), rp("p", 100, 10, 128, 6, 100)}
	fss := []flowv1.FlowSchema{fs("needs-x-and-y", 10, "p", nil, apitest.And(apitest.SuperSet("x", "y")))}
	groups := []string{"x"}
	for k := range 40 {
		g := fmt.Sprintf("g-%02d", k)
		fss = append(fss, fs("only-"+g, int32(100+k), "p", nil, apitest.And(apitest.SuperSet(g))))
		groups = append(groups, fmt.Sprintf("g-%02d", 39-k))
	}
	c := classify.Compile(effective.Compute(rps, fss))
	a := attrs("u", groups, "GET", "/healthz")
	check(t, c, "best of 40 groups, x without y", a, want{"only-g-00", "p", 0, "", 1, false})
	a.Groups = append(a.Groups, "y")
	check(t, c, "x and y", a, want{"needs-x-and-y", "p", 0, "", 1, false})
	var r classify.Result
	if n := testing.AllocsPerRun(100, func() { c.Classify(a, &r) }); n != 0 {
		t.Fatalf("Classify of a request in 42 groups allocates %.1f times; want 0", n)
	}
}
