package apf_test

import (
	"os/exec"
	"strings"
	"testing"
)

// goListDeps returns the packages pattern depends on.
func goListDeps(t *testing.T, pattern string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pattern).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %d packages; the check would prove nothing", len(deps))
	}
	return deps
}

// TestPublicPackagesAreFreeOfControllerRuntime keeps the public packages embeddable in any
// server: none may depend on controller-runtime.
func TestPublicPackagesAreFreeOfControllerRuntime(t *testing.T) {
	for _, p := range goListDeps(t, "./...") {
		if strings.HasPrefix(p, "sigs.k8s.io/controller-runtime") {
			t.Errorf("pkg/apf depends on %s", p)
		}
	}
}

// TestFilterPackageLeavesAPIServerOut: package apf itself does not pull in k8s.io/apiserver's
// request handling, authentication or server packages; apiserverfilter and requestheader do,
// for those who use them.
func TestFilterPackageLeavesAPIServerOut(t *testing.T) {
	for _, p := range goListDeps(t, ".") {
		for _, heavy := range []string{"k8s.io/apiserver/pkg/endpoints", "k8s.io/apiserver/pkg/server",
			"k8s.io/apiserver/pkg/authentication/request"} {
			if strings.HasPrefix(p, heavy) {
				t.Errorf("package apf depends on %s", p)
			}
		}
	}
}
