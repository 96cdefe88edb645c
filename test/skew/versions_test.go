package skew_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// oldestMinor is the oldest supported kube-apiserver minor version (Chart.yaml kubeVersion,
// docs/compatibility.md): the first with flowcontrol.apiserver.k8s.io/v1.
const oldestMinor = 29

// controlPlane is one directory of envtest binaries and the version its kube-apiserver reports.
type controlPlane struct {
	dir          string
	version      string // e.g. 1.29.15
	minor, patch int
}

var versionPattern = regexp.MustCompile(`v1\.(\d+)\.(\d+)`)

// controlPlanes returns the control planes to test, oldest first; it fails the test when the
// oldest supported minor version is not among them.
func controlPlanes(t *testing.T) []controlPlane {
	t.Helper()
	dirs := strings.Fields(os.Getenv("APF_SKEW_ASSETS"))
	if len(dirs) == 0 {
		dirs, _ = filepath.Glob(filepath.Join(envtestutil.RepoRoot(), "bin", "k8s", "*-"+runtime.GOOS+"-"+runtime.GOARCH))
	}
	seen := map[string]bool{}
	var out []controlPlane
	for _, dir := range dirs {
		cp, err := readControlPlane(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !seen[cp.version] {
			seen[cp.version] = true
			out = append(out, cp)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].minor < out[j].minor || out[i].minor == out[j].minor && out[i].patch < out[j].patch
	})
	if len(out) == 0 || out[0].minor != oldestMinor {
		t.Fatalf("no kube-apiserver 1.%d among %v: run `make envtest-oldest` (or set APF_SKEW_ASSETS)", oldestMinor, dirs)
	}
	if len(out) < 2 {
		t.Fatalf("only kube-apiserver %s: the newest supported one is missing too: run `make envtest`", out[0].version)
	}
	return out
}

func readControlPlane(dir string) (controlPlane, error) {
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return controlPlane{}, fmt.Errorf("%s missing in %s: run `make envtest envtest-oldest`", name, dir)
		}
	}
	out, err := exec.Command(filepath.Join(dir, "kube-apiserver"), "--version").Output()
	if err != nil {
		return controlPlane{}, fmt.Errorf("%s/kube-apiserver --version: %w", dir, err)
	}
	m := versionPattern.FindStringSubmatch(string(out))
	if m == nil {
		return controlPlane{}, fmt.Errorf("%s/kube-apiserver --version printed %q, no version", dir, out)
	}
	minor, _ := strconv.Atoi(m[1])
	patch, _ := strconv.Atoi(m[2])
	return controlPlane{dir: dir, version: fmt.Sprintf("1.%d.%d", minor, patch), minor: minor, patch: patch}, nil
}
