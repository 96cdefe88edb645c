package presets_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestValidateCLI runs `apf-operator validate --target native` (the binary the live tests
// build) on the chart's output with every preset enabled: no error, no warning. A FlowSchema of
// the user's at preset-argocd's matchingPriority that matches Argo CD's service accounts too is
// reported as an overlap naming both.
func TestValidateCLI(t *testing.T) {
	startLive(t)
	dir := t.TempDir()
	presets := filepath.Join(dir, "presets.yaml")
	var docs []string
	for _, o := range renderPresets(t, allEnabled()...) {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	if err := os.WriteFile(presets, []byte(strings.Join(docs, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := validateCLI(t, "-f", presets)
	if err != nil || strings.Contains(out, "error:") || strings.Contains(out, "warning:") {
		t.Errorf("validate --target native on the presets: %v\n%s", err, out)
	}
	mine := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(mine, []byte(`apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: FlowSchema
metadata: {name: argocd}
spec:
  matchingPriority: 5010
  requestPriority: {name: preset-controllers}
  match:
  - and:
    - superSet: {field: groups, set: ["system:serviceaccounts:argocd"]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = validateCLI(t, "-f", presets, "-f", mine)
	if err != nil || !strings.Contains(out, `FlowSchemas "argocd" and "preset-argocd" have the same spec.matchingPriority 5010`) {
		t.Errorf("validate with an overlapping FlowSchema: %v; want the overlap warning (exit 0)\n%s", err, out)
	}
}

func validateCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(live.binary, append([]string{"validate", "--target", "native"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
