// Package presets_test proves the chart's presets (docs/presets.md): each renders from the
// chart's values, validates and projects exactly offline (offline_test.go), and on a real
// kube-apiserver with the operator running (live_test.go) each preset's traffic lands where the
// catalog says, and the preset and projected objects read back as they were applied (no null
// versus empty drift for a GitOps diff).
package presets_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// presetKeys are the chart's preset value keys, in the catalog's order.
var presetKeys = []string{"coredns", "cilium", "calico", "metricsServer", "clusterAutoscaler", "karpenter",
	"argocd", "flux", "kyverno", "certManager"}

// allEnabled returns the --set values that enable every preset, plus extra ones.
func allEnabled(extra ...string) []string {
	set := make([]string, 0, len(presetKeys)+len(extra))
	for _, k := range presetKeys {
		set = append(set, "presets."+k+".enabled=true")
	}
	return append(set, extra...)
}

// renderPresets runs `helm template` on the chart with the given --set values and returns the
// RequestPriority and FlowSchema objects it renders, as unstructured manifests.
func renderPresets(t testing.TB, set ...string) []*unstructured.Unstructured {
	t.Helper()
	manifests, err := envtestutil.HelmTemplate("apf-operator-system", set...)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(manifests, "\n---") {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("helm template output: %v\n%s", err, doc)
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetAPIVersion() == flowv1.GroupVersion.String() && (u.GetKind() == "RequestPriority" || u.GetKind() == "FlowSchema") {
			out = append(out, u)
		}
	}
	return out
}

// TestRenderPresetsOffByDefault: the chart renders no preset unless asked, and a level only
// while an enabled preset refers to it.
func TestRenderPresetsOffByDefault(t *testing.T) {
	if got := renderPresets(t); len(got) != 0 {
		t.Errorf("default values render %d preset objects; want none", len(got))
	}
	got := names(renderPresets(t, "presets.argocd.enabled=true"))
	want := []string{"FlowSchema/preset-argocd", "RequestPriority/preset-controllers"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("presets.argocd.enabled=true renders %v; want %v", got, want)
	}
}

// TestRenderPresetsNamespaces: a preset's namespace value reaches its match.
func TestRenderPresetsNamespaces(t *testing.T) {
	objs := renderPresets(t, "presets.karpenter.enabled=true", "presets.karpenter.namespace=karpenter")
	for _, o := range objs {
		if o.GetName() != "preset-karpenter" {
			continue
		}
		match, _, _ := unstructured.NestedSlice(o.Object, "spec", "match")
		if s := toYAML(t, match); !strings.Contains(s, "system:serviceaccount:karpenter:karpenter") {
			t.Errorf("preset-karpenter's match with namespace karpenter:\n%s", s)
		}
		return
	}
	t.Fatalf("preset-karpenter not rendered: %v", names(objs))
}

func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.GetKind() + "/" + o.GetName()
	}
	return sortedCopy(out)
}

func toYAML(t testing.TB, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
