package sidebyside

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	k8suser "k8s.io/apiserver/pkg/authentication/user"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/pkg/apf"
	"github.com/apf-operator/apf-operator/pkg/apf/apiserverfilter"
)

const (
	corpusSize = 200
	corpusSeed = 20261123
)

// outcome is what one filter did with a request, in our names.
type outcome struct {
	status        int
	schema, level string
}

func (o outcome) String() string {
	return fmt.Sprintf("%s @ %s (HTTP %d)", o.schema, o.level, o.status)
}

// TestSideBySide serves a seeded 200-request corpus through the drop-in and through upstream's
// filter, configured equivalently, and fails with a table of every request on which the two
// chose a different FlowSchema or level, or did not both serve it.
func TestSideBySide(t *testing.T) {
	rps, fss := configuration()
	cfg := effective.Compute(rps, fss)
	plan := native.Project(cfg, unbounded)
	requireProjected(t, plan, rps, fss)

	res := runSideBySide(t, rps, fss, plan, newGenerator(corpusSeed).corpus(corpusSize))
	if len(res.mismatches) > 0 {
		t.Errorf("the filters disagree on %d of %d requests:\n%s", len(res.mismatches), corpusSize, table(res.mismatches))
	}
	requireCoverage(t, cfg, res.hits, res.kinds)
	t.Logf("%d requests; per FlowSchema: %v; per category: %v", corpusSize, res.hits, res.kinds)
}

// TestSideBySideReportsDisagreement shows the comparison can fail: the drop-in gets t-trent
// ahead of t-trent-get, upstream the projection of the unchanged configuration, so exactly the
// corpus's get requests of trent must be reported, as t-trent against t-trent-get.
func TestSideBySideReportsDisagreement(t *testing.T) {
	rps, fss := configuration()
	plan := native.Project(effective.Compute(rps, fss), unbounded)
	reordered := slices.Clone(fss)
	i := slices.IndexFunc(reordered, func(fs flowv1.FlowSchema) bool { return fs.Name == "t-trent" })
	reordered[i].Spec.MatchingPriority = 2450 // t-trent-get has 2500

	corpus := newGenerator(corpusSeed).corpus(corpusSize)
	res := runSideBySide(t, rps, reordered, plan, corpus)
	var want []int
	for j, c := range corpus {
		if _, info, err := c.request(); err == nil && c.id.name == "trent" && info.Verb == "get" {
			want = append(want, j)
		}
	}
	var got []int
	for _, m := range res.mismatches {
		got = append(got, m.index)
		if m.ours.schema != "t-trent" || m.upstream.schema != "t-trent-get" {
			t.Errorf("request %d %v: ours %v, upstream %v; want t-trent against t-trent-get", m.index, m.call, m.ours, m.upstream)
		}
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("disagreements reported on requests %v, want exactly trent's get requests %v; table:\n%s",
			got, want, table(res.mismatches))
	}
}

// mismatch is a request on which the filters disagree.
type mismatch struct {
	index          int
	call           call
	ours, upstream outcome
}

// result is what runSideBySide saw: the disagreements, and the requests per FlowSchema (the
// drop-in's choice) and per category.
type result struct {
	mismatches  []mismatch
	hits, kinds map[string]int
}

// runSideBySide serves every call through the drop-in holding rps and fss and through upstream
// holding plan, one call after the other.
func runSideBySide(t *testing.T, rps []flowv1.RequestPriority, fss []flowv1.FlowSchema, plan *native.Plan, corpus []call) result {
	t.Helper()
	served := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	ours := oursHandler(t, rps, fss, served)
	probe, _, err := call{id: authenticated("zed"), method: http.MethodGet, target: "/metrics"}.request()
	if err != nil {
		t.Fatal(err)
	}
	theirs := startUpstream(t, plan, served, probe)

	cfg := effective.Compute(rps, fss)
	levels := nativeLevelNames(cfg)
	res := result{hits: map[string]int{}, kinds: map[string]int{}}
	for i, c := range corpus {
		r, info, err := c.request()
		if err != nil {
			t.Fatal(err)
		}
		o := serveOurs(ours, r, levels)
		u := serveUpstream(theirs, r, cfg.MastersBackstop.Name)
		if o != u || o.status != http.StatusOK {
			res.mismatches = append(res.mismatches, mismatch{index: i, call: c, ours: o, upstream: u})
		}
		res.hits[o.schema]++
		for _, k := range categories(c, info, o, cfg.CatchAll.Name) {
			res.kinds[k]++
		}
	}
	return res
}

// table formats mismatches one per line under a header.
func table(ms []mismatch) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%3s  %-90s  %-40s  %s\n", "#", "request (user[groups] method URL)", "ours", "upstream (mapped back)")
	for _, m := range ms {
		fmt.Fprintf(&b, "%3d  %-90s  %-40s  %s\n", m.index, m.call, m.ours, m.upstream)
	}
	return b.String()
}

// requireProjected fails the test, naming each one, unless every RequestPriority and
// FlowSchema of the configuration is projected.
func requireProjected(t *testing.T, plan *native.Plan, rps []flowv1.RequestPriority, fss []flowv1.FlowSchema) {
	t.Helper()
	for _, rp := range rps {
		if res := plan.RequestPriorities[rp.Name]; !res.Projected {
			t.Errorf("RequestPriority %s is not projected: %s: %s", rp.Name, res.Reason, res.Message)
		}
	}
	for _, fs := range fss {
		if res := plan.FlowSchemaResults[fs.Name]; !res.Projected {
			t.Errorf("FlowSchema %s is not projected: %s: %s", fs.Name, res.Reason, res.Message)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// oursHandler is the drop-in over an apf.Filter holding our objects.
func oursHandler(t *testing.T, rps []flowv1.RequestPriority, fss []flowv1.FlowSchema, next http.Handler) http.Handler {
	t.Helper()
	f, err := apf.New(apf.Options{ServerConcurrencyLimit: upstreamConcurrency})
	if err != nil {
		t.Fatal(err)
	}
	f.Update(rps, fss)
	return apiserverfilter.WithPriorityAndFairness(next, f, longRunning)
}

// nativeLevelNames names, by RequestPriority in effect, the level kube-apiserver enforces it
// as when that is not a level projected from it: "exempt" at level 0 (kube-apiserver's
// mandatory exempt level), "kube-apiserver:<name>" for a level bound to kube-apiserver's
// <name> (spec.nativeLevel), as classification names upstream's own levels.
func nativeLevelNames(cfg *effective.Config) map[string]string {
	out := map[string]string{}
	for _, p := range cfg.Priorities {
		switch {
		case p.Exempt():
			out[p.Name] = exemptLevel
		case p.NativeLevel != "":
			out[p.Name] = "kube-apiserver:" + p.NativeLevel
		}
	}
	return out
}

func serveOurs(h http.Handler, r *http.Request, levels map[string]string) outcome {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	o := outcome{status: rec.Code, schema: rec.Header().Get(apf.HeaderFlowSchema),
		level: rec.Header().Get(apf.HeaderRequestPriority)}
	if name, ok := levels[o.level]; ok {
		o.level = name
	}
	return o
}

func serveUpstream(u *upstream, r *http.Request, mastersSchema string) outcome {
	rec := httptest.NewRecorder()
	u.handler.ServeHTTP(rec, r)
	o := outcome{status: rec.Code}
	o.schema, o.level = u.classification(rec.Header(), mastersSchema)
	return o
}

// requireCoverage fails the test if some FlowSchema in effect (backstops included) or some
// category of request was never reached, so that a weak corpus cannot pass.
func requireCoverage(t *testing.T, cfg *effective.Config, hits, kinds map[string]int) {
	t.Helper()
	var missed []string
	for _, s := range slices.Concat(cfg.Schemas, []*effective.Schema{cfg.MastersBackstop, cfg.CatchAll}) {
		if hits[s.Name] == 0 {
			missed = append(missed, "FlowSchema "+s.Name)
		}
	}
	for _, k := range allCategories {
		if kinds[k] == 0 {
			missed = append(missed, "category "+k)
		}
	}
	sort.Strings(missed)
	if len(missed) > 0 {
		t.Errorf("the corpus (seed %d) reaches none of: %s; aim more requests at them", corpusSeed, strings.Join(missed, ", "))
	}
}

// Categories of requests the corpus must hold.
var allCategories = []string{"system:masters", "anonymous", "service account", "watch", "resource",
	"non-resource", "catch-all"}

// categories are the categories of allCategories request c belongs to.
func categories(c call, info *apirequest.RequestInfo, o outcome, catchAll string) []string {
	var out []string
	add := func(cond bool, k string) {
		if cond {
			out = append(out, k)
		}
	}
	add(slices.Contains(c.id.groups, k8suser.SystemPrivilegedGroup), "system:masters")
	add(c.id.name == k8suser.Anonymous, "anonymous")
	add(strings.HasPrefix(c.id.name, "system:serviceaccount:"), "service account")
	add(info.Verb == "watch", "watch")
	add(info.IsResourceRequest, "resource")
	add(!info.IsResourceRequest, "non-resource")
	add(o.schema == catchAll, "catch-all")
	return out
}
