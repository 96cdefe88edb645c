package sidebyside

import (
	"net/http"
	"testing"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native"
)

// knownDifference is a request the two filters treat differently by design, kept out of the
// corpus and pinned here so that a change on either side shows.
type knownDifference struct {
	call           call
	ours, upstream string // FlowSchemas in our names; upstream's own are "kube-apiserver:<name>"
	why            string
}

// knownDifferences: kube-apiserver's suggested FlowSchemas (precedence 2 to 900) protect the
// control plane ahead of every projected schema (docs/enforcement.md "Order"), and the
// drop-in has no such schemas: its own configuration classifies those requests. Long-running
// requests other than watches are served by upstream without classification; the drop-in
// classifies them and executes them at once without a seat.
var knownDifferences = []knownDifference{
	{call: call{authenticated("zed"), http.MethodGet, "/healthz"}, ours: "non-top-backstop",
		upstream: "kube-apiserver:probes", why: "suggested probes (exempt)"},
	{call: call{anonymous, http.MethodGet, "/readyz/etcd"}, ours: "non-top-backstop",
		upstream: "kube-apiserver:probes", why: "suggested probes: a native path also takes what is below it"},
	{call: call{serviceAccount("kube-system", "x"), http.MethodGet, "/api/v1/namespaces/team-a/pods"},
		ours: "workload-low", upstream: "kube-apiserver:kube-system-service-accounts", why: "suggested, kube-system service accounts"},
	{call: call{authenticated("system:kube-controller-manager"), http.MethodGet, "/api/v1/pods"},
		ours: "workload-low", upstream: "kube-apiserver:kube-controller-manager", why: "suggested, the controller manager"},
	{call: call{authenticated("system:kube-scheduler"), http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"},
		ours: "workload-low", upstream: "kube-apiserver:system-leader-election", why: "suggested, leader election"},
	{call: call{authenticated("system:node:n1", "system:nodes"), http.MethodPatch, "/api/v1/nodes/n1/status"},
		ours: "workload-low", upstream: "kube-apiserver:system-node-high", why: "suggested, node heartbeats"},
	{call: call{authenticated("alice"), http.MethodPost, "/api/v1/namespaces/team-a/pods/p/exec"}, ours: "t-ab",
		upstream: "(no header)", why: "long-running: upstream does not classify"},
	{call: call{authenticated("alice"), http.MethodGet, "/api/v1/namespaces/team-a/pods/p/log"}, ours: "t-ab",
		upstream: "(no header)", why: "long-running: upstream does not classify"},
}

// TestSideBySideKnownDifferences serves knownDifferences through both filters and checks that
// each is classified exactly as documented there.
func TestSideBySideKnownDifferences(t *testing.T) {
	rps, fss := configuration()
	plan := native.Project(effective.Compute(rps, fss), native.Existing{Unmatched: native.UnmatchedOperator})
	corpus := make([]call, len(knownDifferences))
	for i, d := range knownDifferences {
		corpus[i] = d.call
	}
	res := runSideBySide(t, rps, fss, plan, corpus)
	got := map[int]mismatch{}
	for _, m := range res.mismatches {
		got[m.index] = m
	}
	for i, d := range knownDifferences {
		m, ok := got[i]
		switch {
		case !ok:
			t.Errorf("%v (%s): the filters now agree; remove it from knownDifferences and the corpus's exclusions", d.call, d.why)
		case m.ours.schema != d.ours || m.upstream.schema != d.upstream:
			t.Errorf("%v (%s): ours %v, upstream %v; want %s and %s", d.call, d.why, m.ours, m.upstream, d.ours, d.upstream)
		case m.ours.status != http.StatusOK || m.upstream.status != http.StatusOK:
			t.Errorf("%v: not served by both: ours %v, upstream %v", d.call, m.ours, m.upstream)
		}
	}
}
