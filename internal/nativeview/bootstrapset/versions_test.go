package bootstrapset

import (
	"strings"
	"testing"
)

// TestForVersion checks every embedded set: 1.29 to the newest, each read from the
// k8s.io/apiserver release of its minor version, with kube-apiserver's mandatory objects.
func TestForVersion(t *testing.T) {
	versions := Versions()
	if versions[0] != "1.29" || Newest() != versions[len(versions)-1] || len(versions) < 8 {
		t.Fatalf("versions %v: want 1.29 to at least 1.36", versions)
	}
	for _, v := range versions {
		set, err := ForVersion(v)
		if err != nil {
			t.Fatal(err)
		}
		_, minor, _ := strings.Cut(v, ".")
		if set.KubernetesVersion != v || !strings.HasPrefix(set.Module, "k8s.io/apiserver@v0."+minor+".") {
			t.Errorf("%s: set of %s from %s", v, set.KubernetesVersion, set.Module)
		}
		if len(set.MandatoryPriorityLevels) != 2 || len(set.MandatoryFlowSchemas) != 2 || len(set.SuggestedFlowSchemas) < 9 {
			t.Errorf("%s: %d+%d levels, %d+%d schemas", v, len(set.MandatoryPriorityLevels), len(set.SuggestedPriorityLevels),
				len(set.MandatoryFlowSchemas), len(set.SuggestedFlowSchemas))
		}
	}
	for _, spelling := range []string{"v1.29", "1.29.15", "v1.29.0"} {
		if set, err := ForVersion(spelling); err != nil || set.KubernetesVersion != "1.29" {
			t.Errorf("ForVersion(%q): %v", spelling, err)
		}
	}
	for _, bad := range []string{"1.28", "1", "1.x", "", "1.29.1.2"} {
		if _, err := ForVersion(bad); err == nil {
			t.Errorf("ForVersion(%q): no error", bad)
		}
	}
}
