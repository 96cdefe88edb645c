package gitops_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

var update = flag.Bool("update", false, "rewrite deploy/argocd/argocd-cm-health.yaml from deploy/argocd/health.lua")

// snippetPath is the generated argocd-cm snippet, relative to the repository root.
var snippetPath = filepath.Join("deploy", "argocd", "argocd-cm-health.yaml")

// healthKinds are the kinds the health script serves, each under its own argocd-cm key.
var healthKinds = []string{"EventRateLimit", "FlowSchema", "RequestPriority"}

// healthKey is the argocd-cm key of kind's health check: resource.customizations.health.<group>_<kind>.
func healthKey(kind string) string {
	return "resource.customizations.health." + flowv1.GroupVersion.Group + "_" + kind
}

// renderSnippet returns the argocd-cm ConfigMap that carries script for every kind.
func renderSnippet(script string) []byte {
	var b bytes.Buffer
	b.WriteString(`# Argo CD health checks for the apf-operator's objects. Generated from deploy/argocd/health.lua
# by "make argocd-snippet" (go test ./test/gitops -run TestArgoCDSnippet -update): edit that
# file, not this one. Merge it into Argo CD's argocd-cm, for example:
#   kubectl -n argocd patch configmap argocd-cm --patch-file deploy/argocd/argocd-cm-health.yaml
# See docs/gitops.md for what each verdict means.
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
  labels:
    app.kubernetes.io/name: argocd-cm
    app.kubernetes.io/part-of: argocd
data:
`)
	for _, kind := range healthKinds {
		b.WriteString("  " + healthKey(kind) + ": |\n")
		for _, line := range strings.SplitAfter(strings.TrimRight(script, "\n")+"\n", "\n") {
			if strings.TrimSpace(line) == "" {
				b.WriteString(strings.TrimLeft(line, " \t")) // a blank line stays blank
				continue
			}
			b.WriteString("    " + line)
		}
	}
	return b.Bytes()
}

// TestArgoCDSnippet fails when the committed argocd-cm snippet is not the one generated from
// the health script, and checks that it parses as a ConfigMap whose keys carry the script
// unchanged (the literal blocks round-trip).
func TestArgoCDSnippet(t *testing.T) {
	script, err := readHealthScript()
	if err != nil {
		t.Fatal(err)
	}
	want := renderSnippet(script)
	path := filepath.Join(envtestutil.RepoRoot(), snippetPath)
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run `make argocd-snippet` after changing %s", snippetPath, healthScriptPath)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(got, &cm); err != nil {
		t.Fatalf("%s: %v", snippetPath, err)
	}
	if cm.Kind != "ConfigMap" || cm.Name != "argocd-cm" || len(cm.Data) != len(healthKinds) {
		t.Fatalf("%s: %s %s with %d keys, want ConfigMap argocd-cm with %d", snippetPath, cm.Kind, cm.Name, len(cm.Data), len(healthKinds))
	}
	for _, kind := range healthKinds {
		if cm.Data[healthKey(kind)] != script {
			t.Errorf("%s: key %s does not hold %s unchanged", snippetPath, healthKey(kind), healthScriptPath)
		}
	}
}
