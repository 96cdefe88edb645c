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
	plan := native.Project(cfg, native.Existing{})
	requireProjected(t, plan, rps, fss)

	served := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	ours := oursHandler(t, rps, fss, served)
	probe, _, err := call{id: authenticated("zed"), method: http.MethodGet, target: "/metrics"}.request()
	if err != nil {
		t.Fatal(err)
	}
	theirs := startUpstream(t, plan, served, probe)

	exempt := exemptLevels(cfg)
	var mismatches []string
	hits := map[string]int{}
	kinds := map[string]int{}
	for i, c := range newGenerator(corpusSeed).corpus(corpusSize) {
		r, info, err := c.request()
		if err != nil {
			t.Fatal(err)
		}
		o := serveOurs(ours, r, exempt)
		u := serveUpstream(theirs, r, cfg.MastersBackstop.Name)
		if o != u || o.status != http.StatusOK {
			mismatches = append(mismatches, fmt.Sprintf("%3d  %-90s  %-40s  %s", i, c, o, u))
		}
		hits[o.schema]++
		for _, k := range categories(c, info, o, cfg.CatchAll.Name) {
			kinds[k]++
		}
	}
	if len(mismatches) > 0 {
		t.Errorf("the filters disagree on %d of %d requests:\n%3s  %-90s  %-40s  %s\n%s", len(mismatches), corpusSize,
			"#", "request (user[groups] method URL)", "ours", "upstream (mapped back)", strings.Join(mismatches, "\n"))
	}
	requireCoverage(t, cfg, hits, kinds)
	t.Logf("%d requests; per FlowSchema: %v; per category: %v", corpusSize, hits, kinds)
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

// exemptLevels names the RequestPriorities in effect at level 0, all of which kube-apiserver
// enforces as its exempt level.
func exemptLevels(cfg *effective.Config) map[string]bool {
	out := map[string]bool{}
	for _, p := range cfg.Priorities {
		if p.Exempt() {
			out[p.Name] = true
		}
	}
	return out
}

func serveOurs(h http.Handler, r *http.Request, exempt map[string]bool) outcome {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	o := outcome{status: rec.Code, schema: rec.Header().Get(apf.HeaderFlowSchema),
		level: rec.Header().Get(apf.HeaderRequestPriority)}
	if exempt[o.level] {
		o.level = exemptLevel
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
	for _, s := range append(cfg.Schemas, cfg.MastersBackstop, cfg.CatchAll) {
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
