package native_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
)

// Size of the generated traffic and the least number of requests whose classification must be
// compared directly (the chosen FlowSchema is projected).
const (
	equivalenceRequests    = 600
	equivalenceMinCompared = 150
	equivalenceSeed        = 20261122
)

// TestEquivalence sends generated requests to kube-apiserver and checks that the native
// FlowSchema that classified each one (response header) is the projection of the FlowSchema
// the operator's own classifier (internal/apf/classify) chooses for the same attributes. The
// configuration is the operator's defaults plus tenant FlowSchemas that exercise every
// expressible kind of test, and some that are not expressible. A fifth of the requests are
// odd ones kube-apiserver still classifies (it may answer 404 or 405): OPTIONS, TRACE and custom
// methods (verb "" on a resource path), empty path segments and trailing slashes, and ?watch
// spelled watch, watch=, watch=yes, watch=1, or repeated.
//
// For a request whose chosen FlowSchema is not projected, nothing is projected for that
// FlowSchema, so kube-apiserver must classify the request by the projection of the first
// projected FlowSchema that accepts it (or the backstop): those are checked too, against the
// classifier of the configuration without the FlowSchemas that are not projected. A projection
// broader or narrower than its FlowSchema therefore fails the test on any request that tells
// the two apart. Requests kube-apiserver's own suggested FlowSchemas take first (matching
// precedence below native.MinPrecedence, e.g. probes of /healthz) are counted, not compared.
func TestEquivalence(t *testing.T) {
	resetCluster(t)
	createDefaults(t, true)
	rps, fss, wantReasons := tenantConfiguration()
	for i := range rps {
		create(t, &rps[i])
	}
	for i := range fss {
		create(t, &fss[i])
	}
	startOperator(t, operatorConfig{manageDefaults: true})
	waitSettled(t)
	if err := defaultsPresent(); err != nil {
		t.Fatal(err)
	}

	// The configuration as the cluster holds it, with the operator's projection results.
	var rpList flowv1.RequestPriorityList
	var fsList flowv1.FlowSchemaList
	list(t, &rpList, &fsList)
	checkProjectionResults(t, rpList.Items, fsList.Items, wantReasons)
	if t.Failed() {
		t.FailNow()
	}
	cfg := effective.Compute(rpList.Items, fsList.Items)
	full := classify.Compile(cfg)
	var projectedFSs []flowv1.FlowSchema
	schemaNative := map[string]string{effective.CatchAllName: "apf." + effective.CatchAllName}
	for _, f := range fsList.Items {
		if p := currentProjection(f.Status.Conditions, f.Generation, f.Status.NativeName); p.status == "True" {
			projectedFSs = append(projectedFSs, f)
			schemaNative[f.Name] = f.Status.NativeName
		}
	}
	projectedOnly := classify.Compile(effective.Compute(rpList.Items, projectedFSs))
	for _, c := range []*classify.Classifier{full, projectedOnly} {
		if errs := c.Errors(); len(errs) > 0 {
			t.Fatalf("the classifier did not compile: %v", errs)
		}
	}
	levelNative := map[string]string{}
	for _, r := range rpList.Items {
		levelNative[r.Name] = r.Status.NativeName
	}

	// Generate and send the requests.
	gen := newGenerator(equivalenceSeed)
	reqs := make([]generated, equivalenceRequests)
	for i := range reqs {
		reqs[i] = gen.next()
	}
	groups := resolveGroups(t, reqs)
	resps := sendAll(t, reqs, 8)
	natives := listNatives(t)

	var compared, skipped, suggested, retried, emptyVerb, emptyResource, queryWatches int
	retryBudget := 10 // requests re-sent on a mismatch; past it, a mismatch is reported at once
	suggestedBy := map[string]int{}
	perSchema := map[string]int{}
	for i, g := range reqs {
		attrs := g.attributes(groups[g.req.as.String()])
		if attrs.ResourceRequest {
			emptyVerb += boolInt(attrs.Verb == "")
			emptyResource += boolInt(attrs.Resource == "")
			queryWatches += boolInt(attrs.Verb == request.VerbWatch && g.rawQuery != "" && !strings.Contains(g.rawQuery, "watch=true&"))
		}
		var chosen, expected classify.Result
		full.Classify(&attrs, &chosen)
		projectedOnly.Classify(&attrs, &expected)
		_, chosenProjected := schemaNative[chosen.Schema.Name]
		if chosenProjected && chosen.Schema.Name != expected.Schema.Name {
			t.Fatalf("%v: the classifier chose the projected %s, but without the unprojected FlowSchemas %s",
				g.req, chosen.Schema.Name, expected.Schema.Name)
		}
		want := nativeClassification{fs: schemaNative[expected.Schema.Name], plc: levelNativeName(expected.Schema.Priority, levelNative)}
		got, err := natives.classification(resps[i])
		if err == nil && !got.same(want) && (got.ours || got.precedence >= native.MinPrecedence) && retryBudget > 0 {
			// kube-apiserver digests native objects asynchronously: a stale view would pass on
			// a second look, a wrong projection would not.
			retryBudget--
			for attempt := 0; attempt < 5 && err == nil && !got.same(want); attempt++ {
				time.Sleep(300 * time.Millisecond)
				r, sendErr := send(context.Background(), g.req)
				if sendErr != nil {
					t.Fatal(sendErr)
				}
				natives = listNatives(t)
				got, err = natives.classification(r)
			}
			if err == nil && got.same(want) {
				retried++
			}
		}
		switch {
		case err != nil:
			t.Errorf("%v (HTTP %d): %v", g.req, resps[i].status, err)
			continue
		case !got.ours && got.precedence < native.MinPrecedence:
			suggested++
			suggestedBy[got.fs]++
			continue
		case !got.ours:
			t.Errorf("%v: classified by kube-apiserver's %s (precedence %d), which the projection's backstop "+
				"(precedence %d) must precede", g.req, got.fs, got.precedence, native.MaxPrecedence)
			continue
		case !got.same(want):
			t.Errorf("%v\n  attributes %+v\n  classifier: FlowSchema %s (projected: %t); first projected match %s\n"+
				"  kube-apiserver: native FlowSchema %s on level %s; want %s on level %s",
				g.req, attrs, chosen.Schema.Name, chosenProjected, expected.Schema.Name, got.fs, got.plc, want.fs, want.plc)
			continue
		}
		if chosenProjected {
			compared++
			perSchema[chosen.Schema.Name]++
		} else {
			skipped++
		}
	}
	t.Logf("%d requests: %d compared (chosen FlowSchema projected), %d skipped (chosen FlowSchema not projected; "+
		"their fall-through to the next projected FlowSchema checked), %d taken first by kube-apiserver's suggested "+
		"FlowSchemas %v, %d needed a retry", len(reqs), compared, skipped, suggested, suggestedBy, retried)
	t.Logf("compared requests per FlowSchema: %v", perSchema)
	t.Logf("odd request classes among them: %d resource requests with verb \"\" (OPTIONS, TRACE, PROPFIND, LIST), "+
		"%d with resource \"\" (empty path segment), %d watches spelled other than watch=true", emptyVerb, emptyResource, queryWatches)
	if emptyVerb == 0 || emptyResource == 0 || queryWatches == 0 {
		t.Error("the generator misses the odd request classes")
	}
	if compared < equivalenceMinCompared {
		t.Errorf("only %d requests compared, want at least %d", compared, equivalenceMinCompared)
	}
	for name, reason := range wantReasons {
		// system-top takes system:masters, which kube-apiserver exempts first (see the idle test).
		if reason == flowv1.ReasonProjected && name != "system-top" && perSchema[name] == 0 {
			t.Errorf("no generated request was classified by the projected FlowSchema %s: the generator misses it", name)
		}
	}
	if skipped == 0 {
		t.Error("no request chose a FlowSchema that is not projected: the fall-through is not exercised")
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nativeClassification is how kube-apiserver classified a request, by object names.
type nativeClassification struct {
	fs, plc string
	// ours is true when the native FlowSchema is the operator's.
	ours       bool
	precedence int32
}

// classification maps a response's UID headers to native object names.
func (idx nativeIndex) classification(r apiResponse) (nativeClassification, error) {
	if r.flowSchemaUID == "" || r.priorityLevelUID == "" {
		return nativeClassification{}, fmt.Errorf("no classification headers (FlowSchema %q, PriorityLevel %q): %s",
			r.flowSchemaUID, r.priorityLevelUID, r.body)
	}
	f, ok := idx.fsByUID[r.flowSchemaUID]
	if !ok {
		return nativeClassification{}, fmt.Errorf("FlowSchema UID %s is no native FlowSchema in the cluster", r.flowSchemaUID)
	}
	p, ok := idx.plcByUID[r.priorityLevelUID]
	if !ok {
		return nativeClassification{}, fmt.Errorf("PriorityLevel UID %s is no native level in the cluster", r.priorityLevelUID)
	}
	if f.Spec.PriorityLevelConfiguration.Name != p.Name {
		return nativeClassification{}, fmt.Errorf("native FlowSchema %s refers to level %s, but the request ran at %s",
			f.Name, f.Spec.PriorityLevelConfiguration.Name, p.Name)
	}
	return nativeClassification{fs: f.Name, plc: p.Name, ours: native.Owned(f), precedence: f.Spec.MatchingPrecedence}, nil
}

// same reports whether both name the same native FlowSchema and level.
func (g nativeClassification) same(o nativeClassification) bool {
	return g.fs == o.fs && g.plc == o.plc
}

// levelNativeName is the native level of a priority: its status.nativeName ("exempt" for
// level 0), or the backstop's name.
func levelNativeName(p *effective.Priority, byName map[string]string) string {
	switch {
	case p.Backstop && p.Exempt():
		return native.ExemptLevelName
	case p.Backstop:
		return "apf." + p.Name
	}
	return byName[p.Name]
}

// defaultsPresent reports whether the defaults reconciler created every default object.
func defaultsPresent() error {
	for _, d := range defaults.RequestPriorities() {
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: d.Name}, &flowv1.RequestPriority{}); err != nil {
			return fmt.Errorf("default RequestPriority %s: %w", d.Name, err)
		}
	}
	for _, d := range defaults.FlowSchemas() {
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: d.Name}, &flowv1.FlowSchema{}); err != nil {
			return fmt.Errorf("default FlowSchema %s: %w", d.Name, err)
		}
	}
	return nil
}

// checkProjectionResults checks every object's Projected reason against want (FlowSchemas; a
// missing name wants Projected) and that every RequestPriority but tenant-widehand is projected.
func checkProjectionResults(t *testing.T, rps []flowv1.RequestPriority, fss []flowv1.FlowSchema, want map[string]string) {
	t.Helper()
	for _, r := range rps {
		p := currentProjection(r.Status.Conditions, r.Generation, r.Status.NativeName)
		wantReason := flowv1.ReasonProjected
		if r.Name == "tenant-widehand" {
			wantReason = flowv1.ReasonNotExpressible
		}
		if p.reason != wantReason {
			t.Errorf("RequestPriority %s: %v, want reason %s", r.Name, p, wantReason)
		}
	}
	for _, f := range fss {
		p := currentProjection(f.Status.Conditions, f.Generation, f.Status.NativeName)
		wantReason, ok := want[f.Name]
		if !ok {
			t.Errorf("FlowSchema %s: no expectation", f.Name)
			continue
		}
		if p.reason != wantReason || (p.status == "True") != (wantReason == flowv1.ReasonProjected) {
			t.Errorf("FlowSchema %s: %v, want reason %s", f.Name, p, wantReason)
		}
		if wantReason == flowv1.ReasonProjected && p.nativeName != native.NativeName(f.Name) {
			t.Errorf("FlowSchema %s: nativeName %q, want %q", f.Name, p.nativeName, native.NativeName(f.Name))
		}
		if c := meta.FindStatusCondition(f.Status.Conditions, flowv1.ConditionReady); c == nil || c.Status != "True" {
			t.Errorf("FlowSchema %s is not Ready: %+v", f.Name, c)
		}
	}
}

// tenantConfiguration returns the tenant RequestPriorities and FlowSchemas and the Projected
// reason every FlowSchema (the defaults included) must report.
func tenantConfiguration() ([]flowv1.RequestPriority, []flowv1.FlowSchema, map[string]string) {
	const (
		user, verb, apiGroup    = flowv1.FieldUser, flowv1.FieldVerb, flowv1.FieldAPIGroup
		resource, sub, ns, name = flowv1.FieldResource, flowv1.FieldSubresource, flowv1.FieldNamespace, flowv1.FieldName
		path                    = flowv1.FieldPath
	)
	rps := []flowv1.RequestPriority{
		*rp("tenant-gold", 3000, 20, 32, 4, 50),
		*rp("tenant-bronze", 4000, 5, 1, 0, 20),
		// ceil(log2(16) × 16) = 64 bits: valid for the operator, beyond kube-apiserver's 60.
		*rp("tenant-widehand", 4500, 5, 16, 16, 10),
	}
	byUser := &flowv1.FlowDistinguisher{Source: flowv1.SourceUser}
	byNamespace := &flowv1.FlowDistinguisher{Source: flowv1.SourceNamespace}
	withDistinguisher := func(f *flowv1.FlowSchema, d *flowv1.FlowDistinguisher) *flowv1.FlowSchema {
		f.Spec.FlowDistinguisher = d
		return f
	}
	projected, inexpressible := flowv1.ReasonProjected, flowv1.ReasonNotExpressible
	want := map[string]string{
		"system-top": projected, "system-high": inexpressible, "system-low": projected,
		"workload-high": inexpressible, "workload-low": projected,
	}
	var fss []flowv1.FlowSchema
	add := func(f *flowv1.FlowSchema, reason string) {
		fss = append(fss, *f)
		want[f.Name] = reason
	}
	// Not expressible, ahead of the projected ones they overlap: a name test, an unbounded
	// user pattern.
	add(fs("t-name", 900, "tenant-gold", apitest.And(apitest.Equals(user, "tenant-a"), apitest.Equals(name, "special-cm"))), inexpressible)
	add(fs("t-pattern-user", 950, "tenant-bronze", apitest.And(apitest.PatternMatch(user, "tenant-x.*"))), inexpressible)
	// Every request of two users.
	add(withDistinguisher(fs("t-ab", 1000, "tenant-gold", apitest.And(apitest.InSet(user, "tenant-a", "tenant-b"))), byUser), projected)
	// Reads of two kinds of objects themselves (no subresource), in one namespace or cluster-wide.
	add(withDistinguisher(fs("t-c-reads", 1100, "tenant-gold", apitest.And(apitest.Equals(user, "tenant-c"), apitest.InSet(verb, "get", "list", "watch"),
		apitest.InSet(resource, "configmaps", "secrets"), apitest.Equals(sub, ""), apitest.InSet(ns, "team-a", ""))), byNamespace), projected)
	// A group; an API group; objects and two subresources; every namespace and cluster scope.
	add(fs("t-ops-apps", 1200, "tenant-bronze", apitest.And(apitest.SuperSet("ops"), apitest.Equals(apiGroup, "apps"),
		apitest.InSet(resource, "deployments", "statefulsets"), apitest.InSet(sub, "", "scale", "status"))), projected)
	// Writes: a negated verb set, applied to the finite domain of resource verbs.
	add(fs("t-batch-writers", 1300, "tenant-gold", apitest.And(apitest.InSet(user, "tenant-d", "system:serviceaccount:team-b:builder"),
		apitest.NotInSet(verb, "get", "list", "watch", ""), apitest.Equals(apiGroup, "batch"), apitest.InSet(resource, "jobs", "cronjobs"),
		apitest.Equals(sub, ""), apitest.InSet(ns, "team-b"))), projected)
	// Non-resource paths: a prefix, and a path with everything below it on two methods.
	add(fs("t-apis", 1400, "tenant-bronze", apitest.And(apitest.Equals(user, "tenant-e"), apitest.PatternMatch(path, "/apis/.*"))), projected)
	add(fs("t-version", 1500, "tenant-gold", apitest.And(apitest.InSet(user, "tenant-e", "tenant-f"), apitest.PatternMatch(path, "/version(/.*)?"),
		apitest.InSet(verb, "get", "patch"))), projected)
	// Resource and non-resource requests in one conjunction, and a second conjunction.
	add(fs("t-mixed", 1600, "tenant-gold", apitest.And(apitest.Equals(user, "tenant-g"), apitest.InSet(verb, "get", "list")),
		apitest.And(apitest.Equals(user, "tenant-g"), apitest.Equals(verb, "delete"), apitest.PatternMatch(path, "/foo/.*"))), projected)
	// A finite namespace pattern.
	add(fs("t-kube-ns", 1700, "tenant-bronze", apitest.And(apitest.Equals(user, "tenant-h"), apitest.PatternMatch(ns, "kube-(system|public)"),
		apitest.Equals(resource, "configmaps"), apitest.Equals(sub, ""))), projected)
	// Service accounts; every resource and subresource; a negated verb.
	add(fs("t-sa-team", 1800, "tenant-gold", apitest.And(apitest.InSet(user, "system:serviceaccount:team-a:deployer",
		"system:serviceaccount:team-a:viewer"), apitest.NotEquals(verb, "delete"), apitest.NotEquals(verb, ""), apitest.PatternMatch(resource, ".*"), apitest.PatternMatch(sub, ".*"))), projected)
	// The core group and a named one, crossed with two resources.
	add(fs("t-core-apps", 1900, "tenant-bronze", apitest.And(apitest.Equals(user, "tenant-k2"), apitest.Equals(verb, "list"),
		apitest.InSet(apiGroup, "", "apps"), apitest.InSet(resource, "pods", "deployments"), apitest.Equals(sub, ""), apitest.InSet(ns, "team-a", "team-b"))), projected)
	// Every authenticated user.
	add(fs("t-authn-get-deploy", 2000, "tenant-gold", apitest.And(apitest.SuperSet("system:authenticated"), apitest.Equals(verb, "get"),
		apitest.Equals(apiGroup, "apps"), apitest.Equals(resource, "deployments"), apitest.Equals(sub, ""))), projected)
	// Not expressible: a negated verb over the unbounded HTTP methods of non-resource requests;
	// a level kube-apiserver cannot deal hands for; a path equality.
	add(fs("t-nonres-notin", 2100, "tenant-gold", apitest.And(apitest.Equals(user, "tenant-i"), apitest.NotInSet(verb, "get"))), inexpressible)
	// Not expressible: the verb "" (OPTIONS, TRACE, custom methods on a resource path) with some
	// verbs but not all.
	add(fs("t-verb-empty", 2150, "tenant-gold", apitest.And(apitest.Equals(user, "tenant-v"), apitest.NotInSet(verb, "get", "list", "watch"),
		apitest.Equals(resource, "configmaps"), apitest.Equals(sub, ""))), inexpressible)
	// The resource "" (a path with an empty segment, /api/v1//configmaps), listed natively.
	add(fs("t-empty-resource", 2160, "tenant-bronze", apitest.And(apitest.Equals(user, "tenant-w"),
		apitest.InSet(resource, "", "configmaps"), apitest.InSet(sub, "", "status"))), projected)
	add(fs("t-widehand", 2200, "tenant-widehand", apitest.And(apitest.Equals(user, "tenant-j"))), flowv1.ReasonRequestPriorityNotProjected)
	add(fs("t-path-equals", 2300, "tenant-bronze", apitest.And(apitest.Equals(user, "tenant-k"), apitest.Equals(path, "/version"))), inexpressible)
	// The exempt level (the default system-top, level 0): kube-apiserver's exempt level.
	// Only with the record of exempt rights, which an exempt-allowed user writes (test/exempt).
	opsExempt := fs("t-ops-exempt", 2400, "system-top", apitest.And(apitest.Equals(user, "ops-admin")))
	opsExempt.Annotations = map[string]string{flowv1.AnnotationExemptAuthorized: "true"}
	add(opsExempt, projected)
	// Equal matching priorities: the name decides.
	add(fs("t-tie-a", 2500, "tenant-gold", apitest.And(apitest.Equals(user, "tenant-t"), apitest.Equals(verb, "get"))), projected)
	add(fs("t-tie-b", 2500, "tenant-bronze", apitest.And(apitest.Equals(user, "tenant-t"))), projected)
	// After the default workload-low, which takes every resource request first.
	add(fs("t-late", 1000600, "tenant-gold", apitest.And(apitest.Equals(user, "system:serviceaccount:late:sa"))), projected)
	return rps, fss, want
}

// resourceType is a kind of resource the generator addresses.
type resourceType struct {
	group, version, resource string
	namespaced               bool
	subresources             []string
}

var resourceTypes = []resourceType{
	{"", "v1", "configmaps", true, nil},
	{"", "v1", "secrets", true, nil},
	{"", "v1", "pods", true, []string{"status"}},
	{"", "v1", "namespaces", false, []string{"status", "finalize"}},
	{"", "v1", "nodes", false, []string{"status"}},
	{"apps", "v1", "deployments", true, []string{"status", "scale"}},
	{"apps", "v1", "statefulsets", true, []string{"status", "scale"}},
	{"apps", "v1", "pods", true, nil}, // no such resource: classified all the same
	{"batch", "v1", "jobs", true, []string{"status"}},
	{"batch", "v1", "cronjobs", true, []string{"status"}},
	{"rbac.authorization.k8s.io", "v1", "clusterroles", false, nil},
	{"coordination.k8s.io", "v1", "leases", true, nil},
}

var (
	allNamespaces = []string{"team-a", "team-b", "kube-system", "kube-public", "default", "other"}
	allOps        = []string{"list", "watch", "get", "create", "update", "patch", "delete", "deletecollection"}
	// Non-resource paths; /healthz, /livez and /readyz GETs are taken by kube-apiserver's
	// suggested FlowSchema probes.
	allPaths = []string{"/version", "/version/", "/version/foo", "/versionx", "/apis", "/apis/", "/apis/apps",
		"/apis/apps/v1", "/apis/batch", "/api", "/api/v1", "/openapi/v2", "/metrics", "/healthz", "/healthz/etcd",
		"/livez", "/readyz", "/foo/bar", "/foo/", "/foo", "/"}
	allMethods = []string{http.MethodGet, http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
)

// hints bias the generator towards the requests a user's FlowSchemas are about, so that each
// FlowSchema sees requests on both sides of each of its tests.
type hints struct {
	resources, namespaces, ops, subresources, paths, methods []string
	nonResource                                              float64
}

var userHints = map[string]hints{
	"tenant-a":                              {resources: []string{"configmaps"}, namespaces: []string{"team-a"}},
	"tenant-c":                              {resources: []string{"configmaps", "secrets"}, namespaces: []string{"team-a", ""}, ops: []string{"get", "list", "watch"}, nonResource: 0.1},
	"tenant-d":                              {resources: []string{"jobs", "cronjobs"}, namespaces: []string{"team-b"}, ops: []string{"create", "update", "patch", "delete", "get"}, nonResource: 0.1},
	"system:serviceaccount:team-b:builder":  {resources: []string{"jobs", "cronjobs"}, namespaces: []string{"team-b"}, ops: []string{"create", "deletecollection", "list"}, nonResource: 0.1},
	"tenant-e":                              {nonResource: 0.8, paths: []string{"/apis", "/apis/", "/apis/apps", "/apis/apps/v1", "/version", "/version/foo", "/versionx"}},
	"tenant-f":                              {nonResource: 0.8, paths: []string{"/version", "/version/", "/version/foo", "/versionx", "/apis/"}, methods: []string{"GET", "PATCH", "POST", "DELETE"}},
	"tenant-g":                              {nonResource: 0.5, ops: []string{"get", "list", "delete", "watch"}, paths: []string{"/foo/bar", "/foo/", "/foo", "/version"}, methods: []string{"GET", "DELETE", "PATCH"}},
	"tenant-h":                              {resources: []string{"configmaps", "secrets"}, namespaces: []string{"kube-system", "kube-public", "default"}},
	"system:serviceaccount:team-a:deployer": {ops: []string{"delete", "get", "update"}, nonResource: 0.2},
	"tenant-k2":                             {resources: []string{"pods", "deployments"}, namespaces: []string{"team-a", "team-b"}, ops: []string{"list", "list", "get"}},
	"tenant-t":                              {ops: []string{"get", "list"}, nonResource: 0.3, methods: []string{"GET"}},
	"tenant-i":                              {nonResource: 0.6, methods: []string{"GET", "POST"}},
	"tenant-k":                              {nonResource: 0.7, paths: []string{"/version", "/version/foo"}},
	"tenant-v":                              {resources: []string{"configmaps"}},
	"tenant-w":                              {resources: []string{"configmaps"}, namespaces: []string{"team-a"}},
	"ops-user":                              {resources: []string{"deployments", "statefulsets"}, subresources: []string{"scale", "status"}},
	"system:controller:foo":                 {resources: []string{"configmaps", "leases"}, namespaces: []string{"kube-system"}},
}

// generated is one generated request with what the classifier needs besides the groups.
type generated struct {
	req      apiRequest
	urlPath  string
	rawQuery string
}

// attributes are the request's attributes as the operator's resolver sees them, with the
// groups kube-apiserver gave the impersonated user.
func (g generated) attributes(groups []string) request.Attributes {
	var a request.Attributes
	request.ParseURL(g.req.method, g.urlPath, g.rawQuery, &a)
	a.User, a.Groups = g.req.as.user, groups
	return a
}

type generator struct {
	r     *rand.Rand
	users []identity
}

func newGenerator(seed uint64) *generator {
	ids := []identity{
		{user: "tenant-a"}, {user: "tenant-b"}, {user: "tenant-c"}, {user: "tenant-d"},
		{user: "system:serviceaccount:team-b:builder"}, {user: "tenant-e"}, {user: "tenant-f"}, {user: "tenant-g"},
		{user: "tenant-h"}, {user: "system:serviceaccount:team-a:deployer"}, {user: "system:serviceaccount:team-a:viewer"},
		{user: "tenant-k2"}, {user: "tenant-k2"}, {user: "tenant-c"}, {user: "tenant-e"}, {user: "tenant-f"},
		{user: "tenant-h"}, {user: "tenant-t"}, {user: "tenant-x1"}, {user: "tenant-xyz"}, {user: "tenant-i"}, {user: "tenant-v"}, {user: "tenant-w"},
		{user: "tenant-j"}, {user: "tenant-k"}, {user: "ops-admin"}, {user: "ops-user", groups: []string{"ops"}},
		{user: "ops-user", groups: []string{"ops", "devs"}}, {user: "dev-user", groups: []string{"devs"}},
		{user: "system:controller:garbage-collector"}, {user: "system:controller:foo"},
		{user: "system:serviceaccount:late:sa"}, {user: "system:serviceaccount:kube-system:bar"},
		{user: "system:kube-scheduler"}, {user: "user-1"}, {user: "user-2"}, {user: "user-3"},
		{user: "system:serviceaccount:ns-1:sa-1"}, {user: "system:serviceaccount:ns-2:sa-2"},
	}
	return &generator{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), users: ids}
}

func (g *generator) pick(hint, all []string) string {
	if len(hint) > 0 && g.r.Float64() < 0.7 {
		return hint[g.r.IntN(len(hint))]
	}
	return all[g.r.IntN(len(all))]
}

// identity picks a user and sometimes extra groups.
func (g *generator) identity() identity {
	id := g.users[g.r.IntN(len(g.users))]
	switch x := g.r.Float64(); {
	case len(id.groups) > 0:
	case x < 0.03:
		id.groups = []string{"system:unauthenticated"}
	case x < 0.25:
		for _, grp := range []string{"ops", "devs", "system:authenticated", "system:serviceaccounts"} {
			if g.r.IntN(2) == 0 {
				id.groups = append(id.groups, grp)
			}
		}
	}
	return id
}

func (g *generator) next() generated {
	id := g.identity()
	h := userHints[id.user]
	share := h.nonResource
	if share == 0 {
		share = 0.25
	}
	var out generated
	if g.r.Float64() < share {
		out = g.nonResource(id, h)
	} else {
		out = g.resource(id, h)
	}
	if g.r.IntN(5) == 0 {
		return g.odd(out)
	}
	return out
}

// Request classes kube-apiserver classifies beyond the common ones: methods other than GET,
// HEAD, POST, PUT, PATCH and DELETE (verb "" on a resource path, the lower-case method on
// another), and ?watch spellings that kube-apiserver reads as watch (or not).
var (
	oddMethods  = []string{http.MethodOptions, http.MethodTrace, "PROPFIND", "LIST"}
	watchSpells = []string{"watch", "watch=", "watch=yes", "watch=1", "watch=true&watch=false", "watch=0", "watch=false"}
)

// odd turns a request into one of the odd classes: another method, an empty path segment or a
// trailing slash, or another spelling of ?watch.
func (g *generator) odd(in generated) generated {
	method, urlPath, rawQuery := in.req.method, in.urlPath, in.rawQuery
	switch g.r.IntN(4) {
	case 0:
		method = oddMethods[g.r.IntN(len(oddMethods))]
	case 1: // an empty segment after one of the first slashes but the first
		if slashes := strings.Count(urlPath, "/"); slashes > 1 {
			i := 1 + g.r.IntN(slashes-1)
			at := 0
			for range i + 1 {
				at += strings.Index(urlPath[at:], "/") + 1
			}
			urlPath = urlPath[:at] + "/" + urlPath[at:]
		}
	case 2:
		urlPath += "/"
	default:
		if method == http.MethodGet && strings.HasPrefix(urlPath, "/api") {
			// timeoutSeconds ends a watch after a second, and does not change a list.
			rawQuery = watchSpells[g.r.IntN(len(watchSpells))] + "&timeoutSeconds=1"
		}
	}
	return newGenerated(in.req.as, method, urlPath, rawQuery)
}

func (g *generator) nonResource(id identity, h hints) generated {
	p := g.pick(h.paths, allPaths)
	m := g.pick(h.methods, allMethods)
	return newGenerated(id, m, p, "")
}

func (g *generator) resource(id identity, h hints) generated {
	rt := resourceTypes[g.r.IntN(len(resourceTypes))]
	if len(h.resources) > 0 && g.r.Float64() < 0.7 {
		want := h.resources[g.r.IntN(len(h.resources))]
		var candidates []resourceType
		for _, c := range resourceTypes {
			if c.resource == want {
				candidates = append(candidates, c)
			}
		}
		rt = candidates[g.r.IntN(len(candidates))]
	}
	op := g.pick(h.ops, allOps)
	objName := fmt.Sprintf("obj-%d", g.r.IntN(3))
	if g.r.IntN(8) == 0 {
		objName = "special-cm"
	}
	prefix := "/api/" + rt.version
	if rt.group != "" {
		prefix = "/apis/" + rt.group + "/" + rt.version
	}
	collection := prefix + "/" + rt.resource
	if rt.namespaced {
		if ns := g.pick(h.namespaces, append(allNamespaces, "")); ns != "" || (op != "list" && op != "watch") {
			if ns == "" {
				ns = "default"
			}
			collection = prefix + "/namespaces/" + ns + "/" + rt.resource
		}
	}
	object := collection + "/" + objName
	if rt.resource == "namespaces" {
		// A namespace is addressed as /api/v1/namespaces/<name>: its own namespace.
		object = collection + "/" + g.pick(h.namespaces, allNamespaces)
	}
	sub := ""
	if len(rt.subresources) > 0 && g.r.IntN(3) == 0 {
		sub = g.pick(h.subresources, rt.subresources)
	}
	withSub := object
	if sub != "" {
		withSub += "/" + sub
	}
	// get, update and patch address the object or its subresource; delete the object; the
	// others the collection.
	target, query := withSub, ""
	switch op {
	case "list", "watch", "create", "deletecollection":
		target = collection
	case "delete":
		target = object
	}
	switch op {
	case "list":
		if g.r.IntN(6) == 0 {
			query = "fieldSelector=metadata.name%3D" + objName
		}
	case "watch":
		query = "watch=true&timeoutSeconds=1"
	}
	return newGenerated(id, opMethods[op], target, query)
}

// opMethods is the HTTP method of each of allOps.
var opMethods = map[string]string{
	"list": http.MethodGet, "watch": http.MethodGet, "get": http.MethodGet, "create": http.MethodPost,
	"update": http.MethodPut, "patch": http.MethodPatch, "delete": http.MethodDelete, "deletecollection": http.MethodDelete,
}

func newGenerated(id identity, method, urlPath, rawQuery string) generated {
	r := apiRequest{as: id, method: method, path: urlPath}
	if rawQuery != "" {
		r.path += "?" + rawQuery
	}
	switch method {
	case http.MethodPost, http.MethodPut:
		r.contentType, r.body = "application/json", "{}"
	case http.MethodPatch:
		r.contentType, r.body = "application/merge-patch+json", "{}"
	}
	return generated{req: r, urlPath: urlPath, rawQuery: rawQuery}
}

// sendAll sends the requests with the given parallelism and returns the responses in order.
func sendAll(t *testing.T, reqs []generated, workers int) []apiResponse {
	t.Helper()
	out := make([]apiResponse, len(reqs))
	errs := make([]error, len(reqs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = send(context.Background(), reqs[i].req)
			}
		})
	}
	for i := range reqs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// resolveGroups returns the groups kube-apiserver gives each impersonated identity: as a
// SelfSubjectReview reports them, which must agree with impersonatedGroups (for an identity
// that may not create SelfSubjectReviews, impersonatedGroups alone).
func resolveGroups(t *testing.T, reqs []generated) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, g := range reqs {
		id := g.req.as
		if _, ok := out[id.String()]; ok {
			continue
		}
		model := impersonatedGroups(id)
		out[id.String()] = model
		r, err := send(context.Background(), apiRequest{as: id, method: http.MethodPost,
			path: "/apis/authentication.k8s.io/v1/selfsubjectreviews", contentType: "application/json",
			body: `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`})
		if err != nil {
			t.Fatal(err)
		}
		if r.status == http.StatusForbidden && !slices.Contains(model, "system:authenticated") {
			continue
		}
		if r.status != http.StatusCreated {
			t.Fatalf("SelfSubjectReview as %v: HTTP %d: %s", id, r.status, r.body)
		}
		var review struct {
			Status struct {
				UserInfo struct {
					Username string   `json:"username"`
					Groups   []string `json:"groups"`
				} `json:"userInfo"`
			} `json:"status"`
		}
		if err := json.Unmarshal([]byte(r.body), &review); err != nil {
			t.Fatalf("SelfSubjectReview as %v: %v: %s", id, err, r.body)
		}
		got := review.Status.UserInfo
		if got.Username != id.user || !sameSet(got.Groups, model) {
			t.Fatalf("SelfSubjectReview as %v: user %q groups %v; the test expects %v", id, got.Username, got.Groups, model)
		}
		out[id.String()] = got.Groups
	}
	return out
}

// impersonatedGroups are the groups kube-apiserver's impersonation filter gives an identity:
// the requested groups, or a service account's groups when none are requested, plus
// system:authenticated unless system:authenticated or system:unauthenticated is among them.
func impersonatedGroups(id identity) []string {
	groups := slices.Clone(id.groups)
	if len(groups) == 0 {
		if rest, ok := strings.CutPrefix(id.user, "system:serviceaccount:"); ok {
			ns, _, _ := strings.Cut(rest, ":")
			groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}
		}
	}
	if !slices.Contains(groups, "system:authenticated") && !slices.Contains(groups, "system:unauthenticated") {
		groups = append(groups, "system:authenticated")
	}
	return groups
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	sort.Strings(x)
	sort.Strings(y)
	return slices.Equal(x, y)
}
