package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

const chartNamespace = "apf-system"

func helm(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := envtestutil.Tool("helm")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

func chartDir() string { return filepath.Join(envtestutil.RepoRoot(), "charts", "apf-operator") }

// renderChart renders the chart with the given --set values and decodes every object.
func renderChart(t *testing.T, set ...string) []*unstructured.Unstructured {
	t.Helper()
	args := []string{"template", "apf-operator", chartDir(), "--namespace", chartNamespace}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return decodeAll(t, helm(t, args...))
}

// decodeAll decodes every object of a multi-document YAML stream.
func decodeAll(t *testing.T, out string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("decoding rendered manifests: %v", err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	if len(objs) == 0 {
		t.Fatal("nothing was rendered")
	}
	return objs
}

func kinds(objs []*unstructured.Unstructured) map[string]int {
	k := map[string]int{}
	for _, o := range objs {
		k[o.GetKind()]++
	}
	return k
}

func testChartAccepted(t *testing.T) {
	helm(t, "lint", chartDir())
	helm(t, "lint", chartDir(), "--set", "certManager.enabled=true", "--set", "serviceMonitor.enabled=true",
		"--set", "grafanaDashboard.enabled=true", "--set", "prometheusRule.enabled=true")
	ctx := context.Background()
	createRestrictedNamespace(t, ctx)

	custom := renderChart(t, "certManager.enabled=true", "serviceMonitor.enabled=true", "crds.enabled=false", "replicaCount=3",
		"grafanaDashboard.enabled=true", "prometheusRule.enabled=true")
	if k := kinds(custom); k["Certificate"] != 1 || k["ServiceMonitor"] != 1 || k["PrometheusRule"] != 1 ||
		k["ConfigMap"] != 1 || k["CustomResourceDefinition"] != 0 {
		t.Errorf("non-default values rendered kinds %v; want a Certificate, a ServiceMonitor, a PrometheusRule, "+
			"the dashboard ConfigMap and no CRDs", k)
	}
	for _, o := range custom {
		switch o.GetKind() {
		case "Certificate", "Issuer", "ServiceMonitor", "PrometheusRule":
			continue // their CRDs (cert-manager, prometheus-operator) are not installed here
		}
		apply(t, ctx, o, true)
	}

	objs := renderChart(t)
	k := kinds(objs)
	for _, want := range []string{"Deployment", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
		"Service", "ValidatingWebhookConfiguration", "PodDisruptionBudget", "CustomResourceDefinition"} {
		if k[want] == 0 {
			t.Errorf("the default chart renders no %s (kinds: %v)", want, k)
		}
	}
	for _, o := range objs {
		apply(t, ctx, o, true) // server-side dry run first: every object must be accepted
	}
	checkChartWebhooks(t, ctx, objs)
	t.Cleanup(func() { deleteWebhookConfigs(ctx, objs) })
	for _, o := range objs {
		apply(t, ctx, o, false)
	}
	checkRestrictedPod(t, ctx, objs)
}

func createRestrictedNamespace(t *testing.T, ctx context.Context) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chartNamespace, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
	}}}
	if err := k8s.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace %s: %v", chartNamespace, err)
	}
}

// apply applies one rendered object server-side, as a dry run or for real.
func apply(t *testing.T, ctx context.Context, o *unstructured.Unstructured, dryRun bool) {
	t.Helper()
	o = o.DeepCopy()
	if o.GetKind() != "CustomResourceDefinition" && o.GetKind() != "ClusterRole" &&
		o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "ValidatingWebhookConfiguration" && o.GetNamespace() == "" {
		o.SetNamespace(chartNamespace)
	}
	opts := []client.ApplyOption{client.FieldOwner("helm"), client.ForceOwnership}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), opts...); err != nil {
		t.Errorf("the API server rejected %s %s (dry run %v): %v", o.GetKind(), o.GetName(), dryRun, err)
	}
}

// checkRestrictedPod creates, as a server-side dry run, a Pod from the Deployment's template in
// a namespace that enforces the restricted Pod Security Standard.
func checkRestrictedPod(t *testing.T, ctx context.Context, objs []*unstructured.Unstructured) {
	// Control: a pod without a security context must be rejected, or this check proves nothing.
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: chartNamespace},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if err := k8s.Create(ctx, bare, client.DryRunAll); err == nil {
		t.Fatal("a pod without a security context was accepted: Pod Security admission is not enforcing")
	}
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		tmpl, found, err := unstructured.NestedMap(o.Object, "spec", "template")
		if err != nil || !found {
			t.Fatalf("Deployment %s has no pod template: %v", o.GetName(), err)
		}
		pod := &corev1.Pod{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, pod); err != nil {
			t.Fatal(err)
		}
		pod.Name, pod.Namespace = "restricted-check", chartNamespace
		if err := k8s.Create(ctx, pod, client.DryRunAll); err != nil {
			t.Errorf("the operator's pod is not accepted under the restricted Pod Security Standard: %v", err)
		}
		return
	}
	t.Fatal("no Deployment rendered")
}

// deleteWebhookConfigs removes the chart's webhook configuration: its Service has no running
// pods here, and failurePolicy Fail would block every later write of APF objects.
func deleteWebhookConfigs(ctx context.Context, objs []*unstructured.Unstructured) {
	for _, o := range objs {
		if o.GetKind() == "ValidatingWebhookConfiguration" {
			_ = k8s.Delete(ctx, o.DeepCopy())
		}
	}
}

// testKustomizeAccepted renders config/default (the kustomize bases, equivalent to the chart)
// and requires the API server to accept every object in a server-side dry run.
func testKustomizeAccepted(t *testing.T) {
	bin, err := envtestutil.Tool("kustomize")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "build", filepath.Join(envtestutil.RepoRoot(), "config", "default"))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kustomize build config/default: %v\n%s", err, stderr.String())
	}
	objs := decodeAll(t, stdout.String())
	ctx := context.Background()
	for _, o := range objs {
		if o.GetKind() == "Namespace" { // namespaced objects need it for real, even in a dry run
			if err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner("kustomize"), client.ForceOwnership); err != nil {
				t.Fatalf("creating namespace %s: %v", o.GetName(), err)
			}
		}
	}
	for _, o := range objs {
		if err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner("kustomize"), client.ForceOwnership, client.DryRunAll); err != nil {
			t.Errorf("the API server rejected %s %s/%s from config/default: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

// testChartRBACMatchesMarkers: the chart's manager ClusterRole grants exactly what the
// reconcilers' +kubebuilder:rbac markers generate (config/rbac/role.yaml), plus the
// certificate rotation's webhook-configuration rules.
func testChartRBACMatchesMarkers(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(envtestutil.RepoRoot(), "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := grants(t, decodeAll(t, string(data))[0])
	for _, o := range renderChart(t) {
		if o.GetKind() != "ClusterRole" || !strings.HasSuffix(o.GetName(), "-manager") {
			continue
		}
		got := grants(t, o)
		for g := range got {
			if strings.HasPrefix(g, "admissionregistration.k8s.io/") {
				delete(got, g) // certificate rotation, not a reconciler marker
			}
		}
		if !maps.Equal(got, want) {
			t.Fatalf("chart manager ClusterRole grants %v; the markers generate %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		return
	}
	t.Fatal("the chart renders no *-manager ClusterRole")
}

// grants flattens a ClusterRole's rules into "group/resource:verb" strings.
func grants(t *testing.T, role *unstructured.Unstructured) map[string]bool {
	t.Helper()
	var r rbacv1.ClusterRole
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(role.Object, &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, rule := range r.Rules {
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, v := range rule.Verbs {
					out[g+"/"+res+":"+v] = true
				}
			}
		}
	}
	return out
}
