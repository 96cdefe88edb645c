package exempt

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// TestKustomizeShipsTheChartsPolicy: config/exempt holds the chart's policy and binding, with
// the names config/default's prefix completes, so that a kustomize install gets what the live
// tests check on the chart's.
func TestKustomizeShipsTheChartsPolicy(t *testing.T) {
	chart := policyDocs(t, filepath.Join(envtestutil.RepoRoot(), "charts", "apf-operator", "files", "exempt-policy.yaml"))
	config := policyDocs(t, filepath.Join(envtestutil.RepoRoot(), "config", "exempt", "exempt-policy.yaml"))
	if len(chart) != 2 || len(config) != 2 {
		t.Fatalf("want a policy and a binding in each: chart %d, config %d objects", len(chart), len(config))
	}
	for i := range chart {
		if !reflect.DeepEqual(chart[i]["spec"], renamed(config[i]["spec"])) || chart[i]["kind"] != config[i]["kind"] {
			t.Errorf("%v differs:\nchart:  %v\nconfig: %v", chart[i]["kind"], chart[i]["spec"], config[i]["spec"])
		}
	}
}

// policyDocs reads the YAML documents of path.
func policyDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, doc := range strings.Split(string(data), "\n---") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		out = append(out, obj)
	}
	return out
}

// renamed is config/exempt's spec with the binding's policyName as config/default prefixes it.
func renamed(spec any) any {
	m, ok := spec.(map[string]any)
	if !ok {
		return spec
	}
	if name, ok := m["policyName"].(string); ok {
		m["policyName"] = "apf-operator-" + name
	}
	return m
}
