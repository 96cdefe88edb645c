package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

// suite hands TestKubectlPlugin the operator binary, built once per `make test`
// ($APF_OPERATOR_BINARY) or else once here: the binary users install as the plugin. Running the
// raced test binary as the plugin instead cost about 2.5 s per command on a loaded machine
// (loading 160 MB and the race detector's start), 40 s for the test.
var suite = &harness.Suite{Name: "apf-operator", NeedsBinary: true, Lazy: true}

func TestMain(m *testing.M) { harness.Main(m, suite) }

// TestKubectlPlugin puts the operator binary on PATH as kubectl-apf and kubectl_complete-apf
// (symlinks) and runs it through the real kubectl: `kubectl plugin list` finds it, `kubectl apf
// validate|explain|version|help` reach the commands with their flags, output and exit codes,
// and kubectl's shell completion of `kubectl apf ...` reaches the plugin's completion.
func TestKubectlPlugin(t *testing.T) {
	kubectlPath := envtestKubectl(t)
	suite.Start(t)
	binary := suite.Binary
	dir := t.TempDir()
	plugin := filepath.Join(dir, pluginName)
	if err := os.Symlink(binary, plugin); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binary, filepath.Join(dir, pluginCompletionName)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("KUBECONFIG", filepath.Join(dir, "no-kubeconfig"))
	invalid := filepath.Join("internal", "validation", "testdata", "invalid", "rp-hand-size-limit.yaml")
	valid := filepath.Join("internal", "validation", "testdata", "valid", "proposal.yaml")
	cases := []struct {
		args     []string
		code     int
		stdout   string
		stderrIn string
	}{
		{[]string{"plugin", "list"}, 0, plugin + "\n", ""}, // kubectl_complete-apf is not a plugin
		{[]string{"apf", "validate", "--target", "filter", "-f", valid}, 0, "", "10 object(s) checked for --target filter: 0 error(s), 0 warning(s)"},
		{[]string{"apf", "validate", "-o", "github", "-f", invalid}, 1,
			"::error file=" + invalid + ",line=10,col=3,title=RequestPriority/too-large-hand spec.handSize::Invalid value: 12",
			"1 object(s) checked for --target native: 1 error(s), 0 warning(s)"},
		{[]string{"apf", "validate", "-o", "xml", "-f", invalid}, 2, "", `unsupported output "xml"`},
		{[]string{"apf", "explain", "-f", valid, "--as", "alice", "--as-group", "system:masters", "--verb", "get",
			"--path", "/healthz"}, 0, "system:masters is always exempt", ""},
		{[]string{"apf", "explain", "--kubeconfig", filepath.Join(dir, "missing"), "--context", "prod",
			"--as", "alice", "--path", "/healthz"}, 1, "", "loading the kubeconfig"},
		{[]string{"apf", "version"}, 0, "apf-operator ", ""},
		{[]string{"apf"}, 0, "kubectl apf [command]", ""},
		{[]string{"apf", "manager"}, 2, "", `unknown command "manager"`},
		{[]string{"apf", "version", "--help"}, 0, "kubectl apf version [flags]", ""},
		// kubectl's shell completion of `kubectl apf ver` runs kubectl_complete-apf.
		{[]string{"__complete", "apf", "ver"}, 0, "version\tShow the build's version\n:4\n", ""},
		// ... and the values of its enum flags.
		{[]string{"__complete", "apf", "validate", "--target", ""}, 0, "native\nfilter\n:4\n", ""},
		{[]string{"__complete", "apf", "top", "-o", ""}, 0, "json\nyaml\n:4\n", ""},
		{[]string{"__complete", "apf", "recommend", "-o", ""}, 0, "yaml\njson\ngithub\n:4\n", ""},
		{[]string{"__complete", "apf", "replay", "-o", ""}, 0, "text\njson\nyaml\ngithub\n:4\n", ""},
		{[]string{"__complete", "apf", "explain", "--native-unmatched", ""}, 0, "kube-apiserver\noperator\n:4\n", ""},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(kubectlPath, c.args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if err != nil && code <= 0 {
			t.Fatalf("kubectl %v: %v", c.args, err)
		}
		if code != c.code || !strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stderr.String(), c.stderrIn) {
			t.Errorf("kubectl %s: exit %d, stdout %q, stderr %q; want exit %d, stdout containing %q, stderr containing %q",
				strings.Join(c.args, " "), code, stdout.String(), stderr.String(), c.code, c.stdout, c.stderrIn)
		}
	}
}

// envtestKubectl returns the kubectl of the envtest binaries, found as every envtest suite finds
// kube-apiserver (KUBEBUILDER_ASSETS, bin/k8s or setup-envtest's store). It fails, never skips,
// when kubectl is not there.
func envtestKubectl(t *testing.T) string {
	t.Helper()
	kubectl := filepath.Join(envtestutil.AssetsDir(t), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("no kubectl beside the envtest binaries (make envtest builds it): %v", err)
	}
	return kubectl
}

func TestPluginName(t *testing.T) {
	for arg0, want := range map[string]bool{
		"/usr/local/bin/kubectl-apf": true, "kubectl-apf": true,
		"kubectl-apf.exe": true, "apf-operator": false, "/bin/kubectl-apf-x": false,
	} {
		if got := isKubectlPlugin(arg0); got != want {
			t.Errorf("isKubectlPlugin(%q) = %v, want %v", arg0, got, want)
		}
	}
	for arg0, want := range map[string]bool{
		"/usr/local/bin/kubectl_complete-apf": true, "kubectl_complete-apf.exe": true, "kubectl-apf": false,
	} {
		if got := isKubectlPluginCompletion(arg0); got != want {
			t.Errorf("isKubectlPluginCompletion(%q) = %v, want %v", arg0, got, want)
		}
	}
}
