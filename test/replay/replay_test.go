// Package replay_test proves `apf-operator replay` against a real kube-apiserver: envtest's
// kube-apiserver 1.36.3 writes an audit log (policy level Metadata) while the operator (the
// real binary, defaults managed, enforcement native) has projected a tenant configuration onto
// kube-apiserver's flow control; a varied set of requests is sent as impersonated users,
// service accounts and groups, recording each response's Audit-Id and the
// X-Kubernetes-PF-FlowSchema-UID / X-Kubernetes-PF-PriorityLevel-UID headers in which
// kube-apiserver names the FlowSchema and priority level it chose. The audit log is then
// replayed against the live cluster's configuration, and every recorded event's
// classification must equal the headers.
package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/internal/audit"
	"github.com/apf-operator/apf-operator/internal/cli/replay"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

const (
	headerFlowSchemaUID    = "X-Kubernetes-PF-FlowSchema-UID"
	headerPriorityLevelUID = "X-Kubernetes-PF-PriorityLevel-UID"
	auditPolicy            = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
`
)

// call is one request sent as an impersonated user.
type call struct {
	method, path, user string
	groups             []string
	contentType, body  string
}

// calls cover users, service accounts, groups, nodes, the anonymous user; get, list, watch,
// create, update, patch, delete, deletecollection; namespaced and cluster-scoped resources,
// subresources (classified and long-running), a namespace object, and non-resource paths.
// Impersonated users have no RBAC: most answers are 403, which kube-apiserver classifies first.
func calls() []call {
	tenant := []string{"tenants"}
	argocd := "system:serviceaccount:argocd:argocd-application-controller"
	node := []string{"system:nodes"}
	return []call{
		{"GET", "/api/v1/namespaces/shop/pods", "dev-1@example.com", tenant, "", ""},
		{"GET", "/api/v1/namespaces/shop/pods/web-1", "dev-1@example.com", tenant, "", ""},
		{"POST", "/api/v1/namespaces/shop/configmaps", "dev-1@example.com", tenant, "application/json", `{"metadata":{"name":"x"}}`},
		{"GET", "/api/v1/nodes", "dev-1@example.com", tenant, "", ""},
		{"GET", "/api/v1/namespaces/shop", "dev-2@example.com", tenant, "", ""},
		{"DELETE", "/api/v1/namespaces/shop/pods", "dev-2@example.com", tenant, "", ""},
		{"GET", "/api/v1/namespaces/shop/pods/web-1/log", "dev-2@example.com", tenant, "", ""},
		{"POST", "/api/v1/namespaces/shop/pods/web-1/exec?command=ls&stdout=true", "dev-2@example.com", tenant, "", ""},
		{"GET", "/apis/apps/v1/namespaces/shop/deployments", argocd, nil, "", ""},
		{"GET", "/apis/apps/v1/deployments?watch=true", argocd, nil, "", ""},
		{"PUT", "/apis/apps/v1/namespaces/shop/deployments/web/scale", argocd, nil, "application/json", `{"spec":{"replicas":2}}`},
		{"GET", "/api/v1/namespaces/argocd/secrets/repo", argocd, nil, "", ""},
		{"GET", "/api/v1/nodes/n1", "system:node:n1", node, "", ""},
		{"PATCH", "/api/v1/nodes/n1/status", "system:node:n1", node, "application/merge-patch+json", `{}`},
		{"GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager", "system:kube-controller-manager", nil, "", ""},
		{"GET", "/api/v1/namespaces/kube-system/configmaps", "system:serviceaccount:kube-system:deployment-controller", nil, "", ""},
		{"DELETE", "/api/v1/namespaces/ci/secrets/s", "system:serviceaccount:ci:bot", nil, "", ""},
		{"GET", "/api/v1/pods", "root@example.com", []string{"system:masters"}, "", ""},
		{"GET", "/healthz", "system:anonymous", nil, "", ""},
		{"GET", "/readyz?verbose=1", "system:anonymous", nil, "", ""},
		{"GET", "/version", "alice", nil, "", ""},
		{"GET", "/apis", "alice", []string{"viewers"}, "", ""},
		{"GET", "/openapi/v2", "bob", nil, "", ""},
		{"GET", "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications", argocd, nil, "", ""},
	}
}

// observed is what kube-apiserver said about one request.
type observed struct {
	call             call
	status           int
	flowSchemaUID    string
	priorityLevelUID string
}

func TestReplayMatchesKubeAPIServer(t *testing.T) {
	cluster, op, k8s := suite.Cluster, suite.Operator, suite.Client
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	manifests := filepath.Join(envtestutil.RepoRoot(), "internal", "cli", "replay", "testdata", "proposed.yaml")
	applyTenantConfiguration(ctx, t, cluster, manifests, op)
	waitProjected(ctx, t, k8s, "apf-tenant-workloads", "apf-argocd-controller")

	sent := sendStable(ctx, t, k8s, cluster.Config)
	fsNames, plNames := nativeNames(ctx, t, k8s)
	checkReplay(t, cluster.Kubeconfig, logPath, sent, fsNames, plNames)
	checkCommand(t, cluster.Kubeconfig, logPath, manifests)
}

// applyTenantConfiguration applies the manifests once the operator's webhooks answer.
func applyTenantConfiguration(ctx context.Context, t *testing.T, cluster *harness.Cluster, manifests string, op *harness.Operator) {
	t.Helper()
	var stderr string
	for ctx.Err() == nil {
		var err error
		if _, stderr, err = cluster.KubectlRun(ctx, nil, "apply", "-f", manifests); err == nil {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("kubectl apply never succeeded: %s\noperator log:\n%s", stderr, op.ReadLog())
}

// waitProjected waits until the operator's native FlowSchemas exist.
func waitProjected(ctx context.Context, t *testing.T, k8s client.Client, names ...string) {
	t.Helper()
	for _, name := range names {
		for {
			var fs flowcontrolv1.FlowSchema
			err := k8s.Get(ctx, client.ObjectKey{Name: name}, &fs)
			if err == nil && native.Owned(&fs) {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("native FlowSchema %s never projected: %v", name, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// sendStable sends the calls (each twice) while the native configuration stays the same
// (kube-apiserver's own ensurer and the operator may still be settling at first): it retries
// when a FlowSchema or priority level changed between before and after.
func sendStable(ctx context.Context, t *testing.T, k8s client.Client, cfg *rest.Config) map[string]observed {
	t.Helper()
	admin, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		before := configVersion(ctx, t, k8s)
		time.Sleep(3 * time.Second) // kube-apiserver's APF controller digests changes asynchronously
		sent := map[string]observed{}
		for _, c := range append(calls(), calls()...) {
			id, o := send(ctx, t, admin, strings.TrimSuffix(cfg.Host, "/"), c)
			sent[id] = o
		}
		if configVersion(ctx, t, k8s) == before {
			return sent
		}
		if attempt == 5 {
			t.Fatal("the native configuration kept changing while the requests were sent")
		}
	}
}

// configVersion sums up the native objects' resource versions.
func configVersion(ctx context.Context, t *testing.T, k8s client.Client) string {
	t.Helper()
	var fss flowcontrolv1.FlowSchemaList
	var pls flowcontrolv1.PriorityLevelConfigurationList
	if err := errors.Join(k8s.List(ctx, &fss), k8s.List(ctx, &pls)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, fs := range fss.Items {
		fmt.Fprintf(&b, "%s=%s,", fs.Name, fs.ResourceVersion)
	}
	for _, pl := range pls.Items {
		fmt.Fprintf(&b, "%s=%s,", pl.Name, pl.ResourceVersion)
	}
	return b.String()
}

func send(ctx context.Context, t *testing.T, admin *http.Client, base string, c call) (string, observed) {
	t.Helper()
	var body *bytes.Reader
	if c.body != "" {
		body = bytes.NewReader([]byte(c.body))
	}
	req, err := http.NewRequestWithContext(ctx, c.method, base+c.path, nil)
	if body != nil {
		req, err = http.NewRequestWithContext(ctx, c.method, base+c.path, body)
		req.Header.Set("Content-Type", c.contentType)
	}
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Impersonate-User", c.user)
	for _, g := range c.groups {
		req.Header.Add("Impersonate-Group", g)
	}
	resp, err := admin.Do(req)
	if err != nil {
		t.Fatalf("%s %s as %s: %v", c.method, c.path, c.user, err)
	}
	_ = resp.Body.Close()
	id := resp.Header.Get("Audit-Id")
	if id == "" {
		t.Fatalf("%s %s as %s: no Audit-Id header (status %d)", c.method, c.path, c.user, resp.StatusCode)
	}
	return id, observed{call: c, status: resp.StatusCode, flowSchemaUID: resp.Header.Get(headerFlowSchemaUID),
		priorityLevelUID: resp.Header.Get(headerPriorityLevelUID)}
}

// nativeNames maps the native objects' UIDs to their names.
func nativeNames(ctx context.Context, t *testing.T, k8s client.Client) (map[string]string, map[string]string) {
	t.Helper()
	var fss flowcontrolv1.FlowSchemaList
	var pls flowcontrolv1.PriorityLevelConfigurationList
	if err := errors.Join(k8s.List(ctx, &fss), k8s.List(ctx, &pls)); err != nil {
		t.Fatal(err)
	}
	fsNames, plNames := map[string]string{}, map[string]string{}
	for _, fs := range fss.Items {
		fsNames[string(fs.UID)] = fs.Name
	}
	for _, pl := range pls.Items {
		plNames[string(pl.UID)] = pl.Name
	}
	return fsNames, plNames
}

// checkReplay replays the audit log against the live cluster's configuration and compares
// every recorded request's classification with kube-apiserver's headers.
func checkReplay(t *testing.T, kubeconfig, logPath string, sent map[string]observed, fsNames, plNames map[string]string) {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	current, err := replay.LoadCluster(context.Background(), flags)
	if err != nil {
		t.Fatal(err)
	}
	e := replay.NewEngine(replay.NewNativeClassifier(current.FlowSchemas, current.PriorityLevels), nil, time.Minute)
	seen := map[string]bool{}
	e.Observe = func(r *audit.Request, got, _ replay.Class) {
		o, ok := sent[r.ID]
		if !ok {
			return
		}
		seen[r.ID] = true
		want := replay.Class{FlowSchema: fsNames[o.flowSchemaUID], PriorityLevel: plNames[o.priorityLevelUID]}
		if (o.flowSchemaUID != "" && want.FlowSchema == "") || (o.priorityLevelUID != "" && want.PriorityLevel == "") {
			t.Errorf("event %s (%s %s as %s): the headers name unknown objects %s / %s", r.ID, o.call.method, o.call.path,
				o.call.user, o.flowSchemaUID, o.priorityLevelUID)
		}
		if got != want {
			t.Errorf("event %s (%s %s as %s %v, status %d): replay classifies it %s/%s; kube-apiserver's headers say %s/%s",
				r.ID, o.call.method, o.call.path, o.call.user, r.Attributes.Groups, o.status,
				got.SchemaName(), got.LevelName(), want.SchemaName(), want.LevelName())
		}
	}
	stats, err := replay.Replay(e, []replay.Input{{Name: logPath}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stats.BadLines != 0 {
		t.Errorf("kube-apiserver's audit log has %d bad lines: %+v", stats.BadLines, stats.BadLineSamples)
	}
	for id, o := range sent {
		if !seen[id] {
			t.Errorf("event %s (%s %s as %s) is not in the audit log", id, o.call.method, o.call.path, o.call.user)
		}
	}
	classified := 0
	for _, o := range sent {
		if o.flowSchemaUID != "" {
			classified++
		}
	}
	t.Logf("%d recorded requests (%d classified by kube-apiserver) among %d in the audit log, compared with the headers",
		len(sent), classified, stats.Requests)
	if classified < len(sent)/2 {
		t.Errorf("only %d of %d requests carried classification headers", classified, len(sent))
	}
}

// checkCommand runs the command end to end (-o json, then -o github) against the cluster.
func checkCommand(t *testing.T, kubeconfig, logPath, manifests string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := replay.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"--audit-log", logPath, "--kubeconfig", kubeconfig, "-f", manifests, "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("replay -o json: %v\n%s", err, errOut.String())
	}
	var r replay.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("replay -o json printed no report: %v\n%s", err, out.String())
	}
	levels := map[string]bool{}
	for _, l := range r.Levels {
		levels[l.Level] = true
	}
	if r.Requests == 0 || r.Input.BadLines != 0 || !levels["apf-tenant-workloads"] || !levels["apf-gitops"] {
		t.Errorf("replay -o json: %d requests, %d bad lines, levels %v; want requests, none bad, apf-tenant-workloads and apf-gitops",
			r.Requests, r.Input.BadLines, levels)
	}
}
