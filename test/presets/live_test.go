package presets_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/test/harness"
)

// gitOpsManager is the field manager the test applies presets with, as a GitOps tool would.
const gitOpsManager = "gitops"

// landing is one request a preset's component sends and where the catalog says it lands.
type landing struct {
	preset       string
	user         string
	method, path string
	// flowSchema and level are the native objects that must classify it.
	flowSchema, level string
}

// kube-apiserver's suggested schemas and levels that presets meet.
const (
	kubeSystemSAs = "kube-system-service-accounts" // precedence 900, ahead of every projected schema
	serviceAccts  = "service-accounts"             // precedence 9000, after them
	workloadHigh  = "workload-high"
	workloadLow   = "workload-low"
)

func sa(namespace, name string) string { return "system:serviceaccount:" + namespace + ":" + name }

var (
	infrastructure = native.NativeName("preset-infrastructure")
	controllers    = native.NativeName("preset-controllers")
)

// defaultLandings: the presets with the chart's default values. A service account in
// kube-system is taken by kube-apiserver's kube-system-service-accounts (precedence 900) ahead
// of every projected schema, so the presets of components there are projected but do not
// receive their traffic (docs/presets.md explains).
var defaultLandings = []landing{
	{"coredns", sa("kube-system", "coredns"), http.MethodGet, "/apis/discovery.k8s.io/v1/endpointslices", kubeSystemSAs, workloadHigh},
	{"cilium", sa("kube-system", "cilium"), http.MethodGet, "/api/v1/pods", kubeSystemSAs, workloadHigh},
	{"calico", sa("calico-system", "calico-node"), http.MethodGet, "/api/v1/nodes", native.NativeName("preset-calico"), infrastructure},
	{"metricsServer", sa("kube-system", "metrics-server"), http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", kubeSystemSAs, workloadHigh},
	{"clusterAutoscaler", sa("kube-system", "cluster-autoscaler"), http.MethodGet, "/api/v1/nodes", kubeSystemSAs, workloadHigh},
	{"karpenter", sa("kube-system", "karpenter"), http.MethodGet, "/api/v1/nodes", kubeSystemSAs, workloadHigh},
	{"argocd", sa("argocd", "argocd-application-controller"), http.MethodGet, "/apis/apps/v1/deployments", native.NativeName("preset-argocd"), controllers},
	{"flux", sa("flux-system", "kustomize-controller"), http.MethodGet, "/apis/apps/v1/namespaces/default/deployments", native.NativeName("preset-flux"), controllers},
	{"kyverno", sa("kyverno", "kyverno-background-controller"), http.MethodGet, "/api/v1/namespaces", native.NativeName("preset-kyverno"), controllers},
	{"certManager", sa("cert-manager", "cert-manager"), http.MethodGet, "/api/v1/namespaces/cert-manager/secrets", native.NativeName("preset-cert-manager"), controllers},
}

// movedValues and movedLandings: components outside kube-system (values presets.<name>.namespace)
// get their presets' levels; metrics-server's other requests keep kube-apiserver's class.
var (
	movedValues = []string{"presets.coredns.namespace=dns", "presets.cilium.namespace=cilium",
		"presets.metricsServer.namespace=monitoring", "presets.clusterAutoscaler.namespace=autoscaler",
		"presets.karpenter.namespace=karpenter"}
	movedLandings = []landing{
		{"coredns", sa("dns", "coredns"), http.MethodGet, "/apis/discovery.k8s.io/v1/endpointslices", native.NativeName("preset-coredns"), infrastructure},
		{"coredns", sa("dns", "coredns"), http.MethodGet, "/api/v1/services", native.NativeName("preset-coredns"), infrastructure},
		{"coredns", sa("dns", "coredns"), http.MethodGet, "/api/v1/pods", serviceAccts, workloadLow},
		{"cilium", sa("cilium", "cilium"), http.MethodGet, "/api/v1/pods", native.NativeName("preset-cilium"), infrastructure},
		{"metricsServer", sa("monitoring", "metrics-server"), http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews", native.NativeName("preset-metrics-server"), infrastructure},
		{"metricsServer", sa("monitoring", "metrics-server"), http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews", native.NativeName("preset-metrics-server"), infrastructure},
		{"metricsServer", sa("monitoring", "metrics-server"), http.MethodGet, "/api/v1/nodes", serviceAccts, workloadLow},
		{"clusterAutoscaler", sa("autoscaler", "cluster-autoscaler"), http.MethodGet, "/api/v1/nodes", native.NativeName("preset-cluster-autoscaler"), infrastructure},
		{"karpenter", sa("karpenter", "karpenter"), http.MethodGet, "/api/v1/nodes", native.NativeName("preset-karpenter"), infrastructure},
	}
)

// TestPresetsLive installs every preset the way a GitOps tool applies the chart's output
// (server-side apply), waits until the operator projects each, checks that the objects read
// back as applied (no drift), and sends each preset's requests as its identity: the native
// FlowSchema and level in kube-apiserver's classification headers are the catalog's. It then
// moves the components of kube-system elsewhere through the values and checks again.
func TestPresetsLive(t *testing.T) {
	startLive(t)
	ctx := context.Background()
	var observed []observation
	for _, phase := range []struct {
		name     string
		values   []string
		landings []landing
	}{
		{"default values", allEnabled(), defaultLandings},
		{"components outside kube-system", allEnabled(movedValues...), movedLandings},
	} {
		objs := renderPresets(t, phase.values...)
		applyAll(t, ctx, objs)
		waitProjected(t, ctx, objs)
		checkPresetDrift(t, ctx, objs)
		checkNativeDrift(t, ctx)
		for _, l := range phase.landings {
			observed = append(observed, observation{phase: phase.name, landing: l, got: land(t, ctx, l)})
		}
	}
	checkDocTable(t, observed)
}

// applyAll applies the manifests with server-side apply, retrying while the operator's webhook
// does not answer yet (it starts with the test).
func applyAll(t *testing.T, ctx context.Context, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		harness.Eventually(t, 3*time.Minute, "applying "+o.GetName(), func() error {
			return live.k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner(gitOpsManager),
				client.ForceOwnership)
		})
	}
}

// waitProjected waits until every object reports Projected=True for its current generation.
func waitProjected(t *testing.T, ctx context.Context, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		harness.Eventually(t, 2*time.Minute, o.GetKind()+" "+o.GetName()+" Projected", func() error {
			var obj client.Object = &flowv1.FlowSchema{}
			if o.GetKind() == "RequestPriority" {
				obj = &flowv1.RequestPriority{}
			}
			if err := live.k8s.Get(ctx, client.ObjectKey{Name: o.GetName()}, obj); err != nil {
				return err
			}
			return harness.ProjectedNow(obj)
		})
	}
}

// where is the native FlowSchema and level that classified a request.
type where struct{ flowSchema, level string }

// land sends l's request until kube-apiserver classifies it as l says (its flow control picks
// up a new configuration within a moment) or a minute passes, and returns where it landed.
func land(t *testing.T, ctx context.Context, l landing) where {
	t.Helper()
	var got where
	deadline := time.Now().Add(time.Minute)
	for {
		status, fsUID, plUID, err := send(ctx, l.user, l.method, l.path)
		if err != nil {
			t.Fatal(err)
		}
		got = where{nativeName(t, ctx, &flowcontrolv1.FlowSchemaList{}, fsUID), nativeName(t, ctx, &flowcontrolv1.PriorityLevelConfigurationList{}, plUID)}
		if got == (where{l.flowSchema, l.level}) || time.Now().After(deadline) {
			if status == 0 || fsUID == "" {
				t.Errorf("%s %s as %s: status %d without classification headers", l.method, l.path, l.user, status)
			}
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if got != (where{l.flowSchema, l.level}) {
		t.Errorf("preset %s: %s %s as %s landed in FlowSchema %s, level %s; want %s, %s", l.preset, l.method, l.path,
			l.user, got.flowSchema, got.level, l.flowSchema, l.level)
	}
	return got
}

// nativeName returns the name of the native object of list's kind with the given UID.
func nativeName(t *testing.T, ctx context.Context, list client.ObjectList, uid string) string {
	t.Helper()
	if err := live.k8s.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range items {
		if o := item.(client.Object); string(o.GetUID()) == uid {
			return o.GetName()
		}
	}
	return "(uid " + uid + ")"
}
