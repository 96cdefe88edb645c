package envtestutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Bare is a control plane without the project's CRDs, for tests that install them as a user
// would (the chart, the container image).
type Bare struct {
	Env    *envtest.Environment
	Config *rest.Config
	// Kubeconfig is the path of an admin kubeconfig file; Assets the directory of the binaries.
	Kubeconfig, Assets string
}

// StartBare starts kube-apiserver (with the extra flags, name without dashes -> value) and
// etcd for t, with a start timeout generous enough for a machine busy with other suites, and
// stops them when t ends.
func StartBare(t testing.TB, flags map[string]string) *Bare {
	t.Helper()
	assets := AssetsDir(t)
	env := &envtest.Environment{BinaryAssetsDirectory: assets, ControlPlaneStartTimeout: 2 * time.Minute}
	args := env.ControlPlane.GetAPIServer().Configure()
	for name, value := range flags {
		args.Set(name, value)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return &Bare{Env: env, Config: cfg, Kubeconfig: kubeconfig, Assets: assets}
}

// HelmTemplate renders the chart (release apf-operator) into namespace with the given --set
// values, with the pinned helm, and returns the manifests.
func HelmTemplate(namespace string, set ...string) (string, error) {
	bin, err := Tool("helm")
	if err != nil {
		return "", err
	}
	args := []string{"template", "apf-operator", filepath.Join(RepoRoot(), "charts", "apf-operator"), "--namespace", namespace}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("helm %v: %v: %s", args, err, stderr.String())
	}
	return stdout.String(), nil
}
