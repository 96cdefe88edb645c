// Package install runs the install commands of README.md and docs/install.md as written,
// against a real kube-apiserver (envtest) with the kubectl, helm and kustomize the Makefile
// builds. No kubelet runs there, so no pod starts: a command that needs a running pod is
// skipped with its reason, and what can be checked without one is checked instead.
package install

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

// cluster is a bare control plane (no CRDs, no webhooks: the chart installs those) and the
// environment the documented commands run in.
type cluster struct {
	env   *envtest.Environment
	k8s   client.Client
	disc  discovery.DiscoveryInterface
	shell []string // environment of the commands: PATH with the tools, KUBECONFIG, HOME
}

// TestMain quiets envtest's logs (these tests report through t); each test starts its own bare
// control plane (startCluster), since the chart under test installs the CRDs and webhooks.
func TestMain(m *testing.M) { harness.Main(m, &harness.Suite{Name: "install"}) }

func startCluster(t *testing.T) *cluster {
	t.Helper()
	bare := envtestutil.StartBare(t, nil)
	env, cfg, assets := bare.Env, bare.Config, bare.Assets
	k8s, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	kubeconfig := bare.Kubeconfig
	return &cluster{env: env, k8s: k8s, disc: disc, shell: []string{
		"PATH=" + toolDir(t, assets) + ":" + os.Getenv("PATH"),
		"KUBECONFIG=" + kubeconfig,
		"HOME=" + home, // helm's and kubectl's caches and configuration, not the user's
	}}
}

// toolDir returns a directory holding kubectl, helm and kustomize under the names the
// documentation uses, linked to the pinned binaries.
func toolDir(t *testing.T, assets string) string {
	t.Helper()
	dir := t.TempDir()
	links := map[string]string{"kubectl": filepath.Join(assets, "kubectl")}
	for _, name := range []string{"helm", "kustomize"} {
		bin, err := envtestutil.Tool(name)
		if err != nil {
			t.Fatal(err)
		}
		links[name] = bin
	}
	for name, target := range links {
		if _, err := os.Stat(target); err != nil {
			t.Fatalf("%s: %v (run `make envtest`)", name, err)
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// run runs one documented command with bash in the repository's top directory, as a reader
// who cloned it would.
func (c *cluster) run(ctx context.Context, command string) (string, error) {
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-ec", command)
	cmd.Dir = envtestutil.RepoRoot()
	cmd.Env = append(os.Environ(), c.shell...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// step is what the test does around one documented command.
type step struct {
	// skip, when set, is why the command cannot run here; it is not run.
	skip string
	// during runs while the command runs (for example playing the part of a controller that
	// does not run in envtest).
	during func(t *testing.T, ctx context.Context, c *cluster)
	// check runs after the command (or instead of it, when skipped).
	check func(t *testing.T, ctx context.Context, c *cluster)
}

// runDocumented runs every command in order, applying steps; every command in steps must
// be among the documented ones, so that a changed document cannot make a check vacuous.
func runDocumented(t *testing.T, c *cluster, commands []string, steps map[string]step) {
	t.Helper()
	seen := map[string]bool{}
	for _, command := range commands {
		seen[command] = true
		s := steps[command]
		if s.skip != "" {
			t.Logf("SKIPPED %q: %s", command, s.skip)
		} else {
			runStep(t, c, command, s)
		}
		if s.check != nil {
			s.check(t, context.Background(), c)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	for command := range steps {
		if !seen[command] {
			t.Errorf("the test expects the documented command %q, which the documents no longer hold: update the test", command)
		}
	}
}

func runStep(t *testing.T, c *cluster, command string, s step) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	done := make(chan struct{})
	duringCtx, stopDuring := context.WithCancel(ctx)
	if s.during != nil {
		go func() {
			defer close(done)
			s.during(t, duringCtx, c)
		}()
	} else {
		close(done)
	}
	start := time.Now()
	out, err := c.run(ctx, command)
	stopDuring()
	<-done
	if err != nil {
		t.Fatalf("%s: %v\n%s", command, err, out)
	}
	t.Logf("ran %q in %s:\n%s", command, time.Since(start).Round(time.Millisecond), strings.TrimSpace(out))
}

// appVersion is the chart's appVersion: the tag of the image the chart pulls by default and
// that `make image` writes.
func appVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(envtestutil.RepoRoot(), "charts", "apf-operator", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "appVersion:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	t.Fatal("Chart.yaml has no appVersion")
	return ""
}

func defaultImage(t *testing.T) string {
	return fmt.Sprintf("ghcr.io/apf-operator/apf-operator:%s", appVersion(t))
}
