package docexamples_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/internal/cli/validate"
	"github.com/apf-operator/apf-operator/test/docexamples"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// patches are the pages whose RequestPriority documents without a level are patches to merge
// (recommend's output), and how many there are: a new partial RequestPriority elsewhere fails.
var patches = map[string]int{"docs/recommend.md": 5}

// pages reads README.md and every Markdown page under docs/, by path from the repository root.
func pages(t *testing.T) map[string][]docexamples.Document {
	root := envtestutil.RepoRoot()
	out := map[string][]docexamples.Document{}
	read := func(rel string) {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		out[rel] = docexamples.Extract(string(data))
	}
	read("README.md")
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(root, path)
			read(filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEveryExampleValidatesNatively runs `validate --target native` (default budget, offline:
// kube-apiserver's bootstrap levels) over each page's examples together with the README's
// minimal configuration, which a reader of any page has applied first. Exit 0 is required:
// no error, so every RequestPriority is projected (none over the budget, no donor refused).
func TestEveryExampleValidatesNatively(t *testing.T) {
	all := pages(t)
	readme := objects(all["README.md"])
	if len(readme) == 0 {
		t.Fatal("no RequestPriority or FlowSchema found in README.md: the extraction is broken")
	}
	checked := 0
	for page, docs := range all {
		rps, partial := 0, 0
		for _, d := range docs {
			switch {
			case d.Patch():
				partial++
			case d.Kind == "RequestPriority":
				rps++
			}
		}
		if partial != patches[page] {
			t.Errorf("%s: %d RequestPriority documents without priorityLevel or nativeLevel, want %d (patches); "+
				"give each example a level", page, partial, patches[page])
		}
		if rps == 0 {
			continue
		}
		checked += rps
		set := objects(docs)
		if page != "README.md" {
			set = append(readme, set...)
		}
		t.Run(page, func(t *testing.T) { validateNative(t, page, set) })
	}
	if checked < 5 {
		t.Errorf("only %d RequestPriority examples found in README.md and docs/: the extraction is broken", checked)
	}
}

// objects are the documents to apply: every one but the patches.
func objects(docs []docexamples.Document) []docexamples.Document {
	var out []docexamples.Document
	for _, d := range docs {
		if !d.Patch() {
			out = append(out, d)
		}
	}
	return out
}

func validateNative(t *testing.T, page string, docs []docexamples.Document) {
	var b strings.Builder
	for i, d := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(d.Text)
	}
	path := filepath.Join(t.TempDir(), "examples.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := validate.Run([]string{"--target", "native", "-f", path}, nil, &stdout, &stderr); code != 0 {
		t.Errorf("%s: validate --target native exits %d for its examples (with README.md's):\n%s%s\n--- the examples:\n%s",
			page, code, stdout.String(), stderr.String(), b.String())
	}
}
