package validate

import (
	"path/filepath"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/native"
)

var boundManifests = filepath.Join("testdata", "bound", "bound.yaml")

// TestBoundLevelsOffline: offline, a binding to a bootstrap level (workload-high) is clean and a
// binding to any other name is a warning that names --from-cluster; nothing is an error.
func TestBoundLevelsOffline(t *testing.T) {
	code, out, errOut := run(t, "", "--target=native", "-f", boundManifests)
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "0 error(s), 1 warning(s)") {
		t.Errorf("summary %q, want 0 errors and 1 warning", errOut)
	}
	if !strings.Contains(out, `spec.nativeLevel: "team-b-level" is not one of kube-apiserver's bootstrap levels`) ||
		!strings.Contains(out, "--from-cluster") {
		t.Errorf("the warning does not name the unknown level and --from-cluster:\n%s", out)
	}
	if strings.Contains(out, "team-a") {
		t.Errorf("the binding to workload-high is reported:\n%s", out)
	}
}

// TestBoundLevelsFromCluster: with the cluster's levels read, a binding to a level the cluster
// lacks is an error, even a bootstrap name, and one it has is clean.
func TestBoundLevelsFromCluster(t *testing.T) {
	docs, _ := manifest.Read([]string{boundManifests}, nil, nil)
	_, objs, _ := check(t.Context(), docs)
	level := flowcontrolv1.PriorityLevelConfiguration{}
	level.Name = "team-b-level"
	findings := nativeFindings(objs, 10, native.UnmatchedKubeAPIServer,
		nativeLevels{cluster: []flowcontrolv1.PriorityLevelConfiguration{level}})
	if len(findings) != 1 {
		t.Fatalf("findings %v, want one (team-a's workload-high is not in this cluster)", findings)
	}
	f := findings[0]
	if f.Severity == manifest.SeverityWarning || f.Name != "team-a" || f.Field != "spec.nativeLevel" ||
		!strings.Contains(f.Message, "does not exist in the cluster") {
		t.Errorf("finding %+v, want an error on team-a's spec.nativeLevel saying the level does not exist", f)
	}
}
