package apitest

import (
	"os/exec"
	"strings"
	"testing"
)

// AssertFreeOf fails t when a package that pattern (a go list pattern, relative to the test's
// package directory) names depends on a package whose path starts with prefix, directly or
// through its imports. It fails too when go list names fewer than ten packages, where the
// check would prove nothing.
func AssertFreeOf(t *testing.T, pattern, prefix string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pattern).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %d packages; the check would prove nothing", len(deps))
	}
	for _, p := range deps {
		if strings.HasPrefix(p, prefix) {
			t.Errorf("%s depends on %s", pattern, p)
		}
	}
}
