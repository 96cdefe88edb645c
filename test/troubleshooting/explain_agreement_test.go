package troubleshooting_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	"github.com/apf-operator/apf-operator/internal/cli/explain"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// agreementSeed makes the generated requests the same on every run; with 33 they include every
// category coverage checks (non-resource, subresource, log, watch, service account,
// cluster-scoped, tenant).
const agreementSeed = 33

// agreementRequests is how many requests TestExplainAgreesWithKubeAPIServer generates.
const agreementRequests = 50

// TestExplainAgreesWithKubeAPIServer sends 50 generated requests to kube-apiserver, each
// impersonating its identity, and checks that `explain` (its live path, reading this cluster)
// names the FlowSchema and priority level whose UIDs kube-apiserver returns in
// X-Kubernetes-PF-FlowSchema-UID and X-Kubernetes-PF-PriorityLevel-UID, with the operator's
// defaults and a tenant configuration (config/samples) installed and projected.
func TestExplainAgreesWithKubeAPIServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	installTenants(ctx, t)
	kubeconfig := suite.Cluster.Kubeconfig
	requests := generate(agreementSeed, agreementRequests)
	checkCoverage(t, requests)
	var unclassified, tenant int
	for i, g := range requests {
		fsUID, plUID, status := send(ctx, t, &g)
		r := explainLive(t, kubeconfig, &g)
		k := r.KubeAPIServer
		if g.expectUnclassified {
			unclassified++
			if k.Classified || fsUID != "" {
				t.Errorf("case %d, %s: explain classified=%v, kube-apiserver's FlowSchema UID %q; want both unclassified",
					i, &g, k.Classified, fsUID)
			}
			continue
		}
		if k.Source == "FlowSchema/tenant-workloads" {
			tenant++
		}
		if fsUID == "" || string(k.FlowSchema.UID) != fsUID || string(k.PriorityLevel.UID) != plUID {
			t.Errorf("case %d, %s (HTTP %d): explain says FlowSchema %s (%s), level %s (%s); kube-apiserver returned "+
				"FlowSchema UID %q, level UID %q", i, &g, status, k.FlowSchema.Name, k.FlowSchema.UID,
				k.PriorityLevel.Name, k.PriorityLevel.UID, fsUID, plUID)
		}
	}
	t.Logf("seed %d: %d requests, %d unclassified (logs), %d classified by the projected tenant-workloads",
		agreementSeed, len(requests), unclassified, tenant)
	if tenant == 0 {
		t.Error("no generated request reached the tenant configuration's FlowSchema: the test would not see it")
	}
}

// checkCoverage fails when the generated requests miss a category the test is meant to cover.
func checkCoverage(t *testing.T, requests []generated) {
	t.Helper()
	count := map[string]int{}
	for i := range requests {
		g := &requests[i]
		t.Logf("case %d: %s", i, g)
		for category, in := range map[string]bool{
			"non-resource": g.nonResource, "subresource": strings.Contains(g.resource, "/"), "log": g.expectUnclassified,
			"watch": g.verb == "watch", "service account": strings.HasPrefix(g.who.user, "system:serviceaccount:"),
			"cluster-scoped": !g.nonResource && g.namespace == "", "grouped resource": strings.Contains(g.resource, "."),
			"tenant": slices.Contains(g.who.groups, "tenants") && g.namespace != "",
		} {
			if in {
				count[category]++
			}
		}
	}
	for _, category := range []string{"non-resource", "subresource", "log", "watch", "service account", "cluster-scoped",
		"grouped resource", "tenant"} {
		if count[category] == 0 {
			t.Errorf("seed %d generates no %s request", agreementSeed, category)
		}
	}
	t.Logf("categories: %v", count)
}

// installTenants applies config/samples' RequestPriority and FlowSchema and waits until both
// are projected and kube-apiserver classifies a tenant's request by the projection.
func installTenants(ctx context.Context, t *testing.T) {
	t.Helper()
	k8s, err := suite.Cluster.Client()
	if err != nil {
		t.Fatal(err)
	}
	samples := filepath.Join(envtestutil.RepoRoot(), "config", "samples")
	var rp flowv1.RequestPriority
	var fs flowv1.FlowSchema
	for file, obj := range map[string]client.Object{"flowcontrol_v1alpha1_requestpriority.yaml": &rp,
		"flowcontrol_v1alpha1_flowschema.yaml": &fs} {
		data, err := os.ReadFile(filepath.Join(samples, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, obj); err != nil {
			t.Fatal(err)
		}
	}
	// Level 4000: the pages' own configurations (5000, 6000) must not collide with it.
	rp.Spec.PriorityLevel = 4000
	for _, obj := range []client.Object{&rp, &fs} {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := k8s.Delete(context.Background(), obj); err != nil {
				t.Errorf("deleting %s: %v", obj.GetName(), err)
			}
		})
	}
	probe := generated{who: identity{user: "tenant-ci", groups: []string{"tenants"}}, verb: "list", resource: "configmaps",
		namespace: "team-a", method: http.MethodGet, path: "/api/v1/namespaces/team-a/configmaps"}
	deadline := time.Now().Add(90 * time.Second)
	for {
		var got flowv1.FlowSchema
		projected := k8s.Get(ctx, client.ObjectKey{Name: fs.Name}, &got) == nil &&
			meta.IsStatusConditionTrue(got.Status.Conditions, flowv1.ConditionProjected)
		if projected {
			uid, _, _ := send(ctx, t, &probe)
			if native := nativeUID(ctx, t, "apf-tenant-workloads"); uid != "" && uid == native {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tenant configuration is not enforced by kube-apiserver after 90 s (FlowSchema %s projected: %v)",
				fs.Name, projected)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// nativeUID returns the UID of the native FlowSchema name, "" when it does not exist.
func nativeUID(ctx context.Context, t *testing.T, name string) string {
	t.Helper()
	var fs flowcontrolv1.FlowSchema
	k8s, err := suite.Cluster.Client()
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Name: name}, &fs); err != nil {
		return ""
	}
	return string(fs.UID)
}

// send makes g's request as g's identity (rest.Config.Impersonate) and returns the UIDs of
// kube-apiserver's X-Kubernetes-PF-* headers and the HTTP status. The requests are refused by
// authorization (the identities have no RBAC) or fail harmlessly; kube-apiserver classifies a
// request before it authorizes it.
func send(ctx context.Context, t *testing.T, g *generated) (fsUID, plUID string, status int) {
	t.Helper()
	cfg := rest.CopyConfig(suite.Cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: g.who.user, Groups: g.who.groups}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSuffix(cfg.Host, "/") + g.path
	if g.query != "" {
		url += "?" + g.query
	}
	var body *bytes.Reader
	if g.method == http.MethodPost || g.method == http.MethodPut || g.method == http.MethodPatch {
		body = bytes.NewReader([]byte("{}"))
	} else {
		body = bytes.NewReader(nil)
	}
	reqCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, g.method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if g.method == http.MethodPatch {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", g, err)
	}
	resp.Body.Close() // a watch's body would stream: the headers are all that is needed
	return resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID"), resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID"), resp.StatusCode
}

// explainLive runs explain's live path (the command, as the CLI runs it) for g and returns its
// JSON report.
func explainLive(t *testing.T, kubeconfig string, g *generated) *explain.Report {
	t.Helper()
	args := []string{"--kubeconfig", kubeconfig, "--as", g.who.user, "--verb", g.verb, "-o", "json"}
	for _, group := range g.who.groups {
		args = append(args, "--as-group", group)
	}
	if g.nonResource {
		args = append(args, "--path", g.path)
	} else {
		args = append(args, "--resource", g.resource)
		if g.namespace != "" {
			args = append(args, "-n", g.namespace)
		}
		if g.name != "" {
			args = append(args, "--name", g.name)
		}
	}
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	if code := cmdutil.Execute(explain.NewCommand(streams), args, streams); code != 0 {
		t.Fatalf("%s: explain %s: exit %d: %s", g, strings.Join(args, " "), code, errOut.String())
	}
	var r explain.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%s: explain's JSON: %v\n%s", g, err, out.String())
	}
	return &r
}

// TestExplainExpandsShortNames checks that explain's live path resolves --resource as kubectl
// does, against the cluster's discovery: short names, singulars and a missing group.
func TestExplainExpandsShortNames(t *testing.T) {
	for given, want := range map[string][3]string{
		"deploy/scale": {"apps", "deployments", "scale"},
		"po":           {"", "pods", ""},
		"pod/status":   {"", "pods", "status"},
		"leases":       {"coordination.k8s.io", "leases", ""},
		"no":           {"", "nodes", ""},
	} {
		g := generated{who: identity{user: "alice"}, verb: "get", resource: given, namespace: "team-a", name: "x"}
		r := explainLive(t, suite.Cluster.Kubeconfig, &g)
		if got := [3]string{r.Request.APIGroup, r.Request.Resource, r.Request.Subresource}; got != want || r.Note != "" {
			t.Errorf("--resource %s: explained as %q (note %q), want %q", given, got, r.Note, want)
		}
	}
	g := generated{who: identity{user: "alice"}, verb: "get", resource: "widgets.example.com", namespace: "team-a", name: "x"}
	if r := explainLive(t, suite.Cluster.Kubeconfig, &g); r.Request.Resource != "widgets" || !strings.Contains(r.Note, "serves no resource widgets.example.com") {
		t.Errorf("an unknown resource: %+v, note %q; want it explained as given, with a note", r.Request, r.Note)
	}
}
