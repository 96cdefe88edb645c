package native_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	endpointsrequest "k8s.io/apiserver/pkg/endpoints/request"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/klog/v2"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/nativetest"
)

// This file is the differential test of the projection against kube-apiserver's own code,
// called directly, never restated:
//   - request parsing: k8s.io/apiserver's RequestInfoFactory, configured as kube-apiserver
//     configures it, and its long-running check (BasicLongRunningRequestCheck, watches
//     excepted) to leave out the requests kube-apiserver serves unclassified;
//   - rule matching and ordering: k8s.io/apiserver's APF controller (nativetest.Start:
//     utilflowcontrol.New, as an API server builds it) on a fake clientset holding the projected
//     native objects and kube-apiserver's mandatory ones; the FlowSchema it picks is what its
//     noteFn receives.
//
// Requests are HTTP requests (method, path, query): OPTIONS, TRACE and custom methods, paths
// with empty segments and trailing slashes, ?watch variants, subresources, non-resource paths.
// For every request kube-apiserver classifies, the in-process parser must read what
// RequestInfoFactory reads, and whenever the in-process classifier (internal/apf/classify, on
// the effective configuration) picks a projected FlowSchema, kube-apiserver must pick its
// projection ("exempt" for system:masters). Per projected FlowSchema, a controller holding it
// alone must match a request iff the FlowSchema's match accepts it, and iff native.Matches
// says so; native.Classified must agree with the long-running check.

// The oracle logs what it cannot decode and its configuration changes.
func init() { klog.SetLogger(logr.Discard()) }

var (
	requestInfos = &endpointsrequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"),
		GrouplessAPIPrefixes: sets.NewString("api")}
	// longRunning is kube-apiserver's check (k8s.io/kubernetes pkg/controlplane/apiserver/config.go).
	longRunning = genericfilters.BasicLongRunningRequestCheck(sets.NewString("watch", "proxy"),
		sets.NewString("attach", "exec", "proxy", "log", "portforward"))
)

// httpRequest is one generated HTTP request and its identity.
type httpRequest struct {
	method, path, query string
	user                string
	groups              []string
}

func (r httpRequest) String() string {
	return fmt.Sprintf("%s %s?%s as %q %q", r.method, r.path, r.query, r.user, r.groups)
}

// parsed is a request as kube-apiserver and the in-process parser read it; ok is false when
// kube-apiserver does not classify it (rejected before flow control, or long-running).
type parsed struct {
	info  *endpointsrequest.RequestInfo
	attrs request.Attributes
	ok    bool
}

func parse(t testing.TB, r httpRequest) parsed {
	t.Helper()
	hr := &http.Request{Method: r.method, URL: &url.URL{Path: r.path, RawQuery: r.query}}
	info, err := requestInfos.NewRequestInfo(hr)
	if err != nil {
		return parsed{}
	}
	var a request.Attributes
	request.ParseURL(r.method, r.path, r.query, &a)
	a.User, a.Groups = r.user, r.groups
	classified := !longRunning(hr, info) || info.Verb == "watch"
	if native.Classified(&a) != classified {
		t.Fatalf("%s: native.Classified says %v, kube-apiserver's long-running check %v", r, !classified, classified)
	}
	if !classified {
		return parsed{}
	}
	want := request.Attributes{User: r.user, Groups: r.groups, Verb: info.Verb, Path: info.Path}
	if info.IsResourceRequest {
		want = request.Attributes{User: r.user, Groups: r.groups, Verb: info.Verb, APIGroup: info.APIGroup,
			Resource: info.Resource, Subresource: info.Subresource, Namespace: info.Namespace, Name: info.Name,
			ResourceRequest: true}
	}
	got := a
	got.LongRunning = false // not a RequestInfo field
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: the in-process parser reads %+v, kube-apiserver %+v", r, got, want)
	}
	return parsed{info: info, attrs: a, ok: true}
}

var (
	emptyVerbMethods = []string{"OPTIONS", "TRACE", "PROPFIND", "CONNECT"}
	watchQueries     = []string{"watch", "watch=", "watch=yes", "watch=1", "watch=true", "watch=0", "watch=false",
		"watch=false&watch=1", "watch=1&watch=false", "watch=FALSE"}
	oddPaths = []string{"/api/v1//pods", "/api/v1//pods/web", "/apis/apps/v1/namespaces//deployments",
		"/apis/apps/v1/namespaces/ns1//", "/api/v1/namespaces/ns1/pods/", "/apis//v1/pods", "/api/v1/namespaces//pods/web/status",
		"/api/v1/pods//status", "/api/v1/", "/apis/apps/v1", "/healthz/", "//healthz", "/api/v1/watch/pods", "/api/v1/watch",
		"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/", "/api/v1/namespaces/ns1", "/api/v1/namespaces/ns1/status"}
)

// httpFor renders attributes as an HTTP request that should carry them, in one of the forms
// kube-apiserver accepts (or a nearby one): the parsers decide what it carries.
func httpFor(c chooser, a *request.Attributes) httpRequest {
	out := httpRequest{user: a.User, groups: a.Groups}
	if !a.ResourceRequest {
		out.method, out.path = strings.ToUpper(a.Verb), a.Path
		if c.intn(8) == 0 {
			out.method = pick(c, emptyVerbMethods)
		}
		return out
	}
	var b strings.Builder
	switch {
	case a.APIGroup == "" && c.intn(4) == 0:
		b.WriteString("/apis//v1") // the group "" through /apis
	case a.APIGroup == "":
		b.WriteString("/api/v1")
	default:
		b.WriteString("/apis/" + a.APIGroup + "/v1")
	}
	out.method = map[string]string{"get": "GET", "list": "GET", "watch": "GET", "create": "POST", "update": "PUT",
		"patch": "PATCH", "delete": "DELETE", "deletecollection": "DELETE", "proxy": "GET"}[a.Verb]
	switch {
	case out.method == "":
		out.method = pick(c, emptyVerbMethods)
	case a.Verb == "proxy" || a.Verb == "watch" && c.intn(3) == 0:
		b.WriteString("/" + a.Verb)
	case a.Verb == "watch" || a.Verb == "list" && c.intn(3) == 0:
		out.query = pick(c, watchQueries)
	}
	if a.Namespace != "" || c.intn(6) == 0 {
		b.WriteString("/namespaces/" + a.Namespace)
	}
	b.WriteString("/" + a.Resource)
	if a.Name != "" || a.Subresource != "" {
		b.WriteString("/" + a.Name)
	}
	if a.Subresource != "" {
		b.WriteString("/" + a.Subresource)
	}
	if c.intn(8) == 0 {
		b.WriteString("/")
	}
	out.path = b.String()
	return out
}

// httpRequests are n requests for fss: most rendered from the attribute generator of the
// equivalence test (aimed at the conjunctions), the others odd paths with any method.
func httpRequests(c chooser, fss []flowv1.FlowSchema, n int) []httpRequest {
	src := requestsFor(fss)
	out := make([]httpRequest, n)
	for i := range out {
		a := src.next(c)
		out[i] = httpFor(c, a)
		if c.intn(10) == 0 {
			out[i].method = pick(c, []string{"GET", "POST", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "HEAD"})
			out[i].path = pick(c, oddPaths)
			if c.intn(2) == 0 {
				out[i].query = pick(c, watchQueries)
			}
		}
	}
	return out
}

// craftedProjected are the crafted FlowSchemas that are expressible natively.
var craftedProjected = []string{"d-01", "d-02", "d-04", "d-06", "d-08", "d-09", "d-11", "d-12"}

// differentialSpecs are FlowSchemas on the request classes kube-apiserver classifies that a
// nine-verb, non-empty-resource domain would miss: verb "", resource "", negations on verb and
// resource. Some are expressible, some not.
func differentialSpecs() []flowv1.FlowSchema {
	pods := []flowv1.AtomicTest{apitest.Equals(flowv1.FieldResource, "pods"), apitest.Equals(flowv1.FieldSubresource, "")}
	with := func(extra ...flowv1.AtomicTest) flowv1.Conjunction {
		return apitest.And(append(slices.Clone(pods), extra...)...)
	}
	return []flowv1.FlowSchema{
		flowSchema("d-00", 0, "rp-0", nil, with(apitest.NotInSet(flowv1.FieldVerb, "get", "list", "watch"))),
		flowSchema("d-01", 0, "rp-0", nil, with(apitest.NotInSet(flowv1.FieldVerb, "get", "list", "watch", ""))),
		flowSchema("d-02", 0, "rp-1", nil, with(apitest.PatternMatch(flowv1.FieldVerb, ".+"), apitest.Equals(flowv1.FieldUser, "alice"))),
		flowSchema("d-03", 0, "rp-1", nil, apitest.And(apitest.Equals(flowv1.FieldVerb, ""), apitest.Equals(flowv1.FieldUser, "bob"))),
		flowSchema("d-04", 1, "rp-0", nil, apitest.And(apitest.InSet(flowv1.FieldResource, "", "pods"),
			apitest.InSet(flowv1.FieldSubresource, "", "status"), apitest.Equals(flowv1.FieldUser, "carol"))),
		flowSchema("d-05", 1, "rp-1", nil, apitest.And(apitest.NotEquals(flowv1.FieldResource, ""), apitest.Equals(flowv1.FieldSubresource, ""))),
		flowSchema("d-06", 1, "rp-1", nil, apitest.And(apitest.PatternMatch(flowv1.FieldResource, ".*"),
			apitest.PatternMatch(flowv1.FieldSubresource, ".*"), apitest.SuperSet("team-x"))),
		flowSchema("d-07", 2, "rp-0", nil, with(apitest.NotPatternMatch(flowv1.FieldVerb, "get|list"), apitest.Equals(flowv1.FieldUser, "dave"))),
		flowSchema("d-08", 2, "rp-0", nil, apitest.And(apitest.InSet(flowv1.FieldResource, "pods", "", "leases"),
			apitest.NotEquals(flowv1.FieldResource, ""), apitest.Equals(flowv1.FieldSubresource, ""), apitest.Equals(flowv1.FieldUser, "dave"))),
		flowSchema("d-09", 2, "rp-1", nil, apitest.And(apitest.InSet(flowv1.FieldVerb, "", "get", "list", "watch", "create", "update",
			"patch", "delete", "deletecollection", "proxy"), apitest.Equals(flowv1.FieldUser, "tenant-abc"))),
		flowSchema("d-10", 3, "rp-1", nil, apitest.And(apitest.NotEquals(flowv1.FieldVerb, ""), apitest.NotEquals(flowv1.FieldVerb, "get"),
			apitest.SuperSet("team-y"))),
		flowSchema("d-11", 3, "rp-0", nil, apitest.And(apitest.PatternMatch(flowv1.FieldPath, "/healthz(/.*)?"),
			apitest.InSet(flowv1.FieldVerb, "get", "list"))),
		flowSchema("d-12", 3, "rp-0", nil, apitest.And(apitest.PatternMatch(flowv1.FieldPath, "/.*"), apitest.Equals(flowv1.FieldVerb, "list"))),
	}
}

type diffStats struct {
	configs, schemas, projected, requests, classified, compared, emptyVerb, emptyResource, watches int
	isolated, isolatedChecks                                                                       int
}

// checkDifferential projects rps and fss and compares kube-apiserver's classification of every
// request with the in-process one.
func checkDifferential(t *testing.T, rps []flowv1.RequestPriority, fss []flowv1.FlowSchema, reqs []httpRequest, st *diffStats) {
	t.Helper()
	cfg := effective.Compute(rps, fss)
	plan := native.Project(cfg, native.Existing{})
	bySource := map[string]string{}
	for _, fs := range plan.FlowSchemas {
		bySource[fs.Annotations[flowv1.AnnotationSource]] = fs.Name
	}
	st.configs++
	st.schemas += len(cfg.Schemas)
	for _, s := range cfg.Schemas {
		if plan.FlowSchemaResults[s.Name].Projected {
			st.projected++
		}
	}
	up := nativetest.Start(t, plan.PriorityLevels, plan.FlowSchemas)
	defer up.Close()
	classifier := classify.Compile(cfg)
	var res classify.Result
	var all []parsed
	for _, r := range reqs {
		st.requests++
		p := parse(t, r)
		all = append(all, p)
		if !p.ok {
			continue
		}
		st.classified++
		classifier.Classify(&p.attrs, &res)
		want := bySource[native.Source(native.KindFlowSchema, res.Schema.Name)]
		if res.Schema.Name == effective.BackstopExemptName {
			want = flowcontrolv1.FlowSchemaNameExempt // mirrored by kube-apiserver's mandatory exempt
		}
		if want == "" {
			continue // not projected: reported so, nothing to compare
		}
		st.compared++
		if p.info.IsResourceRequest && p.info.Verb == "" {
			st.emptyVerb++
		}
		if p.info.IsResourceRequest && p.info.Resource == "" {
			st.emptyResource++
		}
		if p.info.Verb == "watch" {
			st.watches++
		}
		if got := up.PickRequest(p.info, r.user, r.groups); got != want {
			t.Fatalf("%s: the in-process classifier picks FlowSchema %s (native %s), kube-apiserver %s\nmatch: %s\nnative: %s",
				r, res.Schema.Name, want, got, dump(res.Schema.Match), dump(nativeByName(plan, got)))
		}
	}
	checkIsolated(t, cfg, plan, reqs, all, st)
}

// checkIsolated gives kube-apiserver each projected FlowSchema alone: it must match a request
// iff the FlowSchema's match accepts it.
func checkIsolated(t *testing.T, cfg *effective.Config, plan *native.Plan, reqs []httpRequest, all []parsed, st *diffStats) {
	t.Helper()
	for _, s := range cfg.Schemas {
		name := plan.FlowSchemaResults[s.Name].NativeName
		fs := nativeByName(plan, name)
		if fs == nil {
			continue
		}
		st.isolated++
		up := nativetest.Start(t, plan.PriorityLevels, []flowcontrolv1.FlowSchema{*fs})
		for i, p := range all {
			if !p.ok || slices.Contains(reqs[i].groups, effective.MastersGroup) {
				continue // masters are exempt first
			}
			st.isolatedChecks++
			ours, theirs := ourAccepts(s.Match, &p.attrs), up.PickRequest(p.info, reqs[i].user, reqs[i].groups) == name
			if native.Matches(fs, &p.attrs) != theirs {
				up.Close()
				t.Fatalf("%s: native.Matches(%s) is %v, kube-apiserver's rule matching %v", reqs[i], name, !theirs, theirs)
			}
			if ours != theirs {
				up.Close()
				t.Fatalf("%s: FlowSchema %s accepts it: %v; kube-apiserver matches its projection %s: %v\nmatch: %s\nnative: %s",
					reqs[i], s.Name, ours, name, theirs, dump(s.Match), dump(fs.Spec.Rules))
			}
		}
		up.Close()
	}
}

func nativeByName(plan *native.Plan, name string) *flowcontrolv1.FlowSchema {
	for i := range plan.FlowSchemas {
		if plan.FlowSchemas[i].Name == name {
			return &plan.FlowSchemas[i]
		}
	}
	return nil
}

// TestDifferentialAgainstKubeAPIServer runs the differential test on the crafted specs and on
// random configurations of the equivalence test's generator.
func TestDifferentialAgainstKubeAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts one kube-apiserver APF controller per configuration and per projected FlowSchema")
	}
	const configs, requests = 40, 300
	rnd := randChooser{rand.New(rand.NewPCG(24, 42))}
	st := &diffStats{}
	rps := []flowv1.RequestPriority{requestPriority("rp-0", 10, 64, 6), requestPriority("rp-1", 20, 1, 1)}
	crafted := differentialSpecs()
	reqs := httpRequests(rnd, crafted, 3*requests)
	for _, extra := range []string{"bob", "alice", "carol", "dave", "tenant-abc"} { // verb "" for the users above
		for _, m := range emptyVerbMethods {
			reqs = append(reqs, httpRequest{method: m, path: "/api/v1/namespaces/ns1/pods", user: extra},
				httpRequest{method: m, path: "/api/v1//pods", user: extra, groups: []string{"team-x"}},
				httpRequest{method: m, path: "/apis/apps/v1/namespaces//deployments/web", user: extra, groups: []string{"team-y"}})
		}
	}
	plan := native.Project(effective.Compute(rps, crafted), native.Existing{})
	for _, fs := range crafted {
		if res := plan.FlowSchemaResults[fs.Name]; res.Projected != slices.Contains(craftedProjected, fs.Name) {
			t.Fatalf("FlowSchema %s: %+v", fs.Name, res)
		}
	}
	checkDifferential(t, rps, crafted, reqs, st)
	for range configs {
		rps, fss := randomObjects(rnd)
		checkDifferential(t, rps, fss, httpRequests(rnd, fss, requests), st)
	}
	t.Logf("%d configurations, %d FlowSchemas in effect (%d projected); %d requests, %d classified by kube-apiserver, "+
		"%d compared with a projected choice, 0 mismatches (%d with verb \"\", %d with resource \"\", %d watches); "+
		"%d projected FlowSchemas alone, %d request checks, 0 mismatches", st.configs, st.schemas, st.projected, st.requests,
		st.classified, st.compared, st.emptyVerb, st.emptyResource, st.watches, st.isolated, st.isolatedChecks)
	if st.emptyVerb == 0 || st.emptyResource == 0 || st.watches == 0 || st.projected*5 < st.schemas {
		t.Fatal("the generator misses the request classes the test is for")
	}
}
