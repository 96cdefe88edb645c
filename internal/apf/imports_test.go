package apf

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEngineIsFreeOfControllerRuntime keeps the engine embeddable in any API server: no package
// of internal/apf may depend on controller-runtime, directly or through its imports.
func TestEngineIsFreeOfControllerRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %d packages; the check would prove nothing", len(deps))
	}
	for _, p := range deps {
		if strings.HasPrefix(p, "sigs.k8s.io/controller-runtime") {
			t.Errorf("internal/apf depends on %s", p)
		}
	}
}
