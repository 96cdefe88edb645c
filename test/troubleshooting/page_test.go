package troubleshooting_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

// page is the page under test.
var page = filepath.Join(envtestutil.RepoRoot(), "docs", "troubleshooting.md")

// readBlocks returns the page's fenced code blocks.
func readBlocks(t *testing.T) []harness.CodeBlock { return readBlocksOf(t, page) }

// readBlocksOf returns the fenced code blocks of the Markdown file path.
func readBlocksOf(t *testing.T, path string) []harness.CodeBlock {
	t.Helper()
	blocks, err := harness.CodeBlocks(path)
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}

// commands returns the commands of a shell block: backslash-continued lines joined, blank
// lines dropped.
func commands(b harness.CodeBlock) []string {
	var out []string
	var cur strings.Builder
	for _, line := range b.Lines {
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`))
			continue
		}
		cur.WriteString(line)
		if c := strings.TrimSpace(cur.String()); c != "" {
			out = append(out, c)
		}
		cur.Reset()
	}
	return out
}

// result is what a command printed.
type result struct {
	stdout, stderr string
	code           int
}

// runAsAdmin runs the commands in order as the cluster admin (runCommand) and fails t at the
// first that exits non-zero.
func runAsAdmin(t *testing.T, dir string, commands ...string) {
	t.Helper()
	for _, command := range commands {
		if r := runCommand(t, dir, suite.Cluster.Kubeconfig, command); r.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", command, r.code, r.stdout, r.stderr)
		}
	}
}

// runCommand runs command with bash in dir, with kubectl and apf-operator first on PATH and the
// given kubeconfig.
func runCommand(t *testing.T, dir, kubeconfig, command string) result {
	t.Helper()
	stdout, stderr, code := harness.Bash(t, 2*time.Minute, dir, binDir, []string{"KUBECONFIG=" + kubeconfig, "HOME=" + dir}, "-c", command)
	return result{stdout, stderr, code}
}

// placeholders are the page's placeholders and what the test puts in their place.
var placeholders = strings.NewReplacer("<name>", "tenants")

// metricName finds the metric names in the page's text.
var metricName = regexp.MustCompile(`\b(?:apiserver_flowcontrol|apf_operator)_[a-z_]+\b`)
