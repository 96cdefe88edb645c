package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

// workFiles are the repository's files and directories the documented commands name, copied
// into the work directory under the names the docs use, beside testdata/work's own files.
var workFiles = map[string]string{
	"clusters/prod":              "examples/fleet/clusters/production", // the docs' one cluster of a fleet
	"clusters/staging":           "examples/fleet/clusters/staging",
	"a.yaml":                     "examples/fleet/clusters/production/apf/requestpriorities.yaml",
	"b.yaml":                     "examples/fleet/clusters/production/apf/flowschemas.yaml",
	"overlays/prod/apf.yaml":     "examples/fleet/clusters/production/apf/requestpriorities.yaml",
	"charts/my-chart":            "charts/apf-operator",
	"native.yaml":                "internal/cli/importer/testdata/custom.yaml",
	"openshift":                  "internal/cli/importer/testdata/corpus/openshift-v1",
	"karpenter-flowschemas.yaml": "internal/cli/importer/testdata/corpus/karpenter-getting-started/flowschemas.yaml",
	"main/apf/apf.yaml":          "internal/cli/replay/testdata/current.yaml",
	"pr/apf/apf.yaml":            "internal/cli/replay/testdata/proposed.yaml",
	"from.metrics":               "internal/cli/recommend/testdata/from.metrics",
	"to.metrics":                 "internal/cli/recommend/testdata/to.metrics",
	"manifests":                  "internal/cli/recommend/testdata/manifests",
}

// workDir returns a fresh work directory: testdata/work and workFiles.
func workDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	root := envtestutil.RepoRoot()
	copyTree(t, filepath.Join(root, "test", "docs", "testdata", "work"), dir)
	for dst, src := range workFiles {
		copyTree(t, filepath.Join(root, src), filepath.Join(dir, dst))
	}
	return dir
}

// writePageFiles writes the page's blocks with file=NAME (```yaml file=erl.yaml) into dir, as
// the page's commands read them.
func writePageFiles(t *testing.T, dir string, blocks []block) {
	t.Helper()
	for _, b := range blocks {
		name := b.attrs["file"]
		if name == "" {
			continue
		}
		if filepath.Base(name) != name {
			t.Fatalf("%s: file=%q must be a plain file name", b, name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(b.lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// copyTree copies the file or directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// result is what a command did.
type result struct {
	stdout, stderr string
	code           int
}

// run runs command with bash (pipefail) in dir, binDir first on PATH, with no kubeconfig: an
// offline command that reached for a cluster fails.
func run(t *testing.T, dir, command string) result {
	t.Helper()
	stdout, stderr, code := harness.Bash(t, time.Minute, dir, binDir,
		[]string{"KUBECONFIG=" + filepath.Join(dir, "no-kubeconfig"), "HOME=" + dir}, "-o", "pipefail", "-c", command)
	for tool, why := range missingTools {
		if strings.Contains(stderr, tool+": command not found") {
			t.Errorf("%s: %v", command, why)
		}
	}
	return result{stdout, stderr, code}
}

// wantShownOutput requires every line a console block shows after a command among the lines
// the command printed (standard output and error, as a terminal shows them), in order; "..."
// in a shown line stands for any text.
func wantShownOutput(t *testing.T, shown []string, r result) {
	t.Helper()
	got := strings.Split(r.stdout+r.stderr, "\n")
	next := 0
	for _, line := range shown {
		line = strings.TrimRight(line, " ")
		if line == "" {
			continue
		}
		pattern := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(line), regexp.QuoteMeta("..."), ".*") + " *$")
		for next < len(got) && !pattern.MatchString(got[next]) {
			next++
		}
		if next == len(got) {
			t.Errorf("the page shows the line\n%s\nwhich the command did not print (in this order); it printed:\n%s%s", line, r.stdout, r.stderr)
			return
		}
		next++
	}
}
