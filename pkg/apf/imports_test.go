package apf_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/internal/apitest"
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

// commandLinePackages are the command-line libraries the CLI uses and the public packages must
// not: an API server that embeds the filter should not link cobra or kubectl's cli-runtime.
var commandLinePackages = []string{"github.com/spf13/cobra", "k8s.io/cli-runtime"}

// TestPublicPackagesAreFreeOfCommandLinePackages keeps pkg/apf and its subpackages free of
// cobra and cli-runtime: they read manifests through internal/manifest, never through a
// command's package.
func TestPublicPackagesAreFreeOfCommandLinePackages(t *testing.T) {
	for _, prefix := range commandLinePackages {
		apitest.AssertFreeOf(t, "./...", prefix)
	}
}

// TestCommandLinePackagesAreSpelledRight: the CLI's validate command does depend on every
// forbidden package, so a misspelled prefix cannot make the check above pass vacuously.
func TestCommandLinePackagesAreSpelledRight(t *testing.T) {
	deps := goListDeps(t, "../../internal/cli/validate")
	for _, prefix := range commandLinePackages {
		if !slices.ContainsFunc(deps, func(p string) bool { return strings.HasPrefix(p, prefix) }) {
			t.Errorf("internal/cli/validate does not depend on %s: is the prefix spelled right?", prefix)
		}
	}
}
