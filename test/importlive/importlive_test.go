// Package importlive checks `apf-operator import` on a live kube-apiserver: published
// FlowSchemas (a sample of internal/cli/importer/testdata/corpus) are applied as they ship,
// requests are classified by kube-apiserver (X-Kubernetes-PF-FlowSchema-UID and
// -PriorityLevel-UID), then the published objects are replaced by the projection of their
// import and every request must keep its priority level.
package importlive

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/cli/importer"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// sample is the corpus cases applied to the server.
var sample = []string{"kwok", "kubernetes-website", "karpenter-getting-started", "openshift-v1"}

// probe is a request made as user (with groups) and the level kube-apiserver gave it.
type probe struct {
	user   string
	groups []string
	path   string
}

var probes = []probe{
	{"system:serviceaccount:kube-system:kwok-controller", nil, "/api/v1/namespaces/default/configmaps"},
	{"system:anonymous", []string{"system:unauthenticated"}, "/healthz"},
	{"system:serviceaccount:default:default", nil, "/api/v1/namespaces/default/events"},
	{"system:serviceaccount:kube-system:karpenter", nil, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/karpenter"},
	{"system:serviceaccount:kube-system:karpenter", nil, "/api/v1/nodes"},
	{"system:serviceaccount:openshift-monitoring:prometheus-k8s", nil, "/metrics"},
	{"system:serviceaccount:openshift-etcd-operator:etcd-operator", nil, "/api/v1/namespaces/openshift-etcd/pods"},
	{"system:serviceaccount:openshift-ovn-kubernetes:ovn-kubernetes-node", nil, "/api/v1/nodes"},
	{"alice", nil, "/api/v1/namespaces/default/configmaps"},
}

// sentinelProbe is the probe whose level tells that the sample is in effect.
const sentinelProbe = 5

const waitTimeout = 2 * time.Minute

// TestImportedSampleKeepsLevels applies the sample, records kube-apiserver's level for every
// probe, swaps the sample for the projection of its import and waits for every probe to get
// the same level again.
func TestImportedSampleKeepsLevels(t *testing.T) {
	cp := envtestutil.StartBare(t, nil)
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	ctx := context.Background()
	var paths []string
	for _, c := range sample {
		paths = append(paths, filepath.Join(envtestutil.RepoRoot(), "internal", "cli", "importer", "testdata", "corpus", c))
	}
	in, err := importer.ReadFiles(paths)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, cs, in.PriorityLevels, in.FlowSchemas)
	// The sample is in effect once OpenShift's Prometheus scrapes /metrics exempt (kube-apiserver
	// digests new objects asynchronously, all at once).
	sentinel := make([]string, len(probes))
	sentinel[sentinelProbe] = flowcontrolv1.PriorityLevelConfigurationNameExempt
	levels(t, cp.Config, cs, nil, sentinel...)
	before := levels(t, cp.Config, cs, nil)

	cluster, err := nativeview.List(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	res := importer.Import(in, importer.Options{Existing: importer.ExistingLevels("the cluster", cluster.PriorityLevels)})
	if len(res.Problems)+len(res.Unenforced) > 0 {
		t.Fatalf("import: %q %q", res.Problems, res.Unenforced)
	}
	remove(t, cs, in)
	own, err := nativeview.List(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	plan := native.Project(effective.Compute(res.RequestPriorities, res.FlowSchemas), native.Existing{
		PriorityLevels: own.PriorityLevels, FlowSchemas: own.FlowSchemas})
	for name, r := range plan.FlowSchemaResults {
		if !r.Projected {
			t.Fatalf("FlowSchema %s not projected: %s: %s", name, r.Reason, r.Message)
		}
	}
	apply(t, cs, plan.PriorityLevels, plan.FlowSchemas)
	bound := map[string]string{}
	for _, rp := range res.RequestPriorities {
		if rp.Spec.NativeLevel != "" {
			bound[native.NativeName(rp.Name)] = rp.Spec.NativeLevel
		}
	}
	after := levels(t, cp.Config, cs, func(level string) string {
		if l, ok := bound[level]; ok {
			return l
		}
		return strings.TrimPrefix(level, "apf-")
	}, before...)
	for i, p := range probes {
		t.Logf("%s %s: %s before, %s after the import", p.user, p.path, before[i], after[i])
	}
}

// apply creates the native objects.
func apply(t *testing.T, cs kubernetes.Interface, plcs []flowcontrolv1.PriorityLevelConfiguration, fss []flowcontrolv1.FlowSchema) {
	t.Helper()
	ctx := context.Background()
	for _, l := range plcs {
		l.ResourceVersion = ""
		if _, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, &l, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating PriorityLevelConfiguration %s: %v", l.Name, err)
		}
	}
	for _, fs := range fss {
		fs.ResourceVersion = ""
		if _, err := cs.FlowcontrolV1().FlowSchemas().Create(ctx, &fs, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating FlowSchema %s: %v", fs.Name, err)
		}
	}
}

// remove deletes the sample's objects.
func remove(t *testing.T, cs kubernetes.Interface, in *importer.Input) {
	t.Helper()
	ctx := context.Background()
	for _, fs := range in.FlowSchemas {
		if err := cs.FlowcontrolV1().FlowSchemas().Delete(ctx, fs.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range in.PriorityLevels {
		if err := cs.FlowcontrolV1().PriorityLevelConfigurations().Delete(ctx, l.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// levels classifies every probe on the server and returns each one's level (mapped by
// original, when given). With want, it waits until every probe gets its wanted level ("" any)
// (kube-apiserver digests new objects asynchronously).
func levels(t *testing.T, cfg *rest.Config, cs kubernetes.Interface, original func(string) string, want ...string) []string {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(cfg.Host, "/")
	out := make([]string, len(probes))
	deadline := time.Now().Add(waitTimeout)
	for i, p := range probes {
		for {
			level, err := classify(client, cs, base, p)
			if err == nil && original != nil {
				level = original(level)
			}
			if err == nil && (want == nil || want[i] == "" || level == want[i]) {
				out[i] = level
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s %s: level %q (%v), want %q", p.user, p.path, level, err, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return out
}

// classify sends the probe and returns the name of the level kube-apiserver's headers name.
func classify(c *http.Client, cs kubernetes.Interface, base string, p probe) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+p.path, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Impersonate-User", p.user)
	for _, g := range p.groups {
		req.Header.Add("Impersonate-Group", g)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	_ = resp.Body.Close()
	uid := resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID")
	if uid == "" {
		return "", fmt.Errorf("HTTP %d without classification headers", resp.StatusCode)
	}
	plcs, err := cs.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, l := range plcs.Items {
		if string(l.UID) == uid {
			return l.Name, nil
		}
	}
	return "", fmt.Errorf("no level of UID %s", uid)
}
