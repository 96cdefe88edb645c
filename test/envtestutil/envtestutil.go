// Package envtestutil finds the envtest control-plane binaries (those hack/build-envtest.sh
// builds, or setup-envtest's) and the project's generated CRDs, so that every envtest suite starts the same real
// kube-apiserver and etcd. A suite whose binaries are missing fails with the command that builds
// them; it never skips.
package envtestutil

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// mainModule is the go.mod line that marks the repository's top directory.
const mainModule = "module github.com/apf-operator/apf-operator\n"

// RepoRoot returns the repository's top directory: the nearest directory above the working
// directory (go test runs a test in its package's) whose go.mod is the main module's. It does
// not use the source file's path, which -trimpath (make test's unraced lane) makes relative.
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(fmt.Sprintf("envtestutil: working directory: %v", err))
	}
	for start := dir; ; dir = filepath.Dir(dir) {
		if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(mod), mainModule) {
			return dir
		}
		if filepath.Dir(dir) == dir {
			panic(fmt.Sprintf("envtestutil: no directory above %s holds the main module's go.mod", start))
		}
	}
}

// CRDDir returns the directory of the generated CRDs.
func CRDDir() string { return filepath.Join(RepoRoot(), "config", "crd", "bases") }

// WebhookDir returns the directory of the generated webhook manifests.
func WebhookDir() string { return filepath.Join(RepoRoot(), "config", "webhook") }

// Assets returns the directory holding kube-apiserver, etcd and kubectl: KUBEBUILDER_ASSETS
// when set (the Makefile sets it), else the newest bin/k8s/<version>-<os>-<arch> directory,
// else the newest one in setup-envtest's store (which `make envtest` uses when it holds the
// pinned version, instead of building into bin/).
func Assets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, checkBinaries(dir)
	}
	suffix := "*-" + runtime.GOOS + "-" + runtime.GOARCH
	pattern := filepath.Join(RepoRoot(), "bin", "k8s", suffix)
	dirs, _ := filepath.Glob(pattern)
	if len(dirs) == 0 {
		if store, err := envtest.SetupEnvtestDefaultBinaryAssetsDirectory(); err == nil {
			dirs, _ = filepath.Glob(filepath.Join(store, suffix))
		}
	}
	if len(dirs) == 0 {
		return "", fmt.Errorf("no envtest binaries under %s nor in setup-envtest's store: run `make envtest` to build them", filepath.Dir(pattern))
	}
	sort.Strings(dirs)
	dir := dirs[len(dirs)-1]
	return dir, checkBinaries(dir)
}

func checkBinaries(dir string) error {
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("envtest binary %s missing in %s: run `make envtest` to build it", name, dir)
		}
	}
	return nil
}

// AssetsDir is Assets for a test: it fails the test when the binaries are missing.
func AssetsDir(t testing.TB) string {
	t.Helper()
	dir, err := Assets()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// NewEnvironment returns an envtest environment that installs the project's CRDs, using the
// binaries Assets finds. Callers add webhook options before Start.
func NewEnvironment() (*envtest.Environment, error) {
	dir, err := Assets()
	if err != nil {
		return nil, err
	}
	return &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDDirectoryPaths:     []string{CRDDir()},
		ErrorIfCRDPathMissing: true,
	}, nil
}

// Tool returns the path of a pinned tool the Makefile builds as bin/<name>-<version> (for
// example helm or kustomize), the newest when several versions are cached. $LOCALBIN, when set,
// stands for bin/, as it does for the Makefile (a git worktree without a bin/ of its own).
func Tool(name string) (string, error) {
	dir := os.Getenv("LOCALBIN")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "bin")
	}
	matches, _ := filepath.Glob(filepath.Join(dir, name+"-v*"))
	if len(matches) == 0 {
		return "", fmt.Errorf("%s/%s-<version> not found: run `make envtest` (it builds the pinned tools)", dir, name)
	}
	sort.Strings(matches)
	return matches[len(matches)-1], nil
}
