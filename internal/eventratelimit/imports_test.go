package eventratelimit

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEngineIsFreeOfControllerRuntime keeps the engine a plain library: it must not depend on
// controller-runtime, directly or through its imports (the webhook and the reconciler adapt it).
func TestEngineIsFreeOfControllerRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %d packages; the check would prove nothing", len(deps))
	}
	for _, p := range deps {
		if strings.HasPrefix(p, "sigs.k8s.io/controller-runtime") {
			t.Errorf("internal/eventratelimit depends on %s", p)
		}
	}
}
