// Package docs_test runs the documentation: every fenced shell block of README.md and docs/*.md
// carries a class in its info string (```sh run=offline), and the blocks of class offline run
// here, as written, with the apf-operator binary (also as kubectl-apf), helm and kustomize on
// PATH, in a scratch copy of a work directory holding the files they name (testdata/work, the
// repository's files of workFiles, and the page's own blocks marked file=NAME). Each command's exit
// code and what it prints on standard output and standard error are checked against the shape
// this package expects (expectations), and a console block's printed output against the
// block's own lines. A shell block without a class, or a class this package does not know,
// fails: a new block is never skipped silently. The other classes say why a block does not run
// here: it needs a cluster (and test/install or test/troubleshooting may run it there), builds
// or tests the project (minutes), or changes the machine it runs on.
package docs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

var suite = &harness.Suite{Name: "docs", NeedsBinary: true, BeforeControlPlane: setUpPath}

var (
	// binDir holds apf-operator, kubectl-apf, helm and kustomize, first on the commands' PATH.
	binDir string
	// missingTools says why a pinned tool is not in binDir, by name.
	missingTools = map[string]error{}
)

func TestMain(m *testing.M) { harness.Main(m, suite) }

// setUpPath links the binaries the documented commands name into binDir. A pinned tool that
// is not built is left out: the commands that need it fail and say so.
func setUpPath(s *harness.Suite) error {
	binDir = filepath.Join(s.Dir, "bin")
	if err := os.Mkdir(binDir, 0o755); err != nil {
		return err
	}
	links := map[string]string{"apf-operator": s.Binary, "kubectl-apf": s.Binary}
	for _, tool := range []string{"helm", "kustomize"} {
		path, err := envtestutil.Tool(tool)
		if err != nil {
			missingTools[tool] = err
			continue
		}
		links[tool] = path
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(binDir, name)); err != nil {
			return err
		}
	}
	return nil
}
