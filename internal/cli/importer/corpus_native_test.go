package importer

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// corpusDir holds the published configurations, one case per directory, with their sources
// in README.md.
var corpusDir = filepath.Join("testdata", "corpus")

// sourceRow is a row of the README's table: file, repository, path, commit.
var sourceRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([^ |]+) \\| `([^`]+)`.* \\| `([0-9a-f]{40})` \\|$")

// TestCorpus imports each published configuration and checks the round-trip property on it
// against the newest bootstrap set: clean under validate --target native, 0 requests that
// change level.
func TestCorpus(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(corpusDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	repos, files := map[string]bool{}, 0
	for _, m := range sourceRow.FindAllStringSubmatch(string(readme), -1) {
		if _, err := os.Stat(filepath.Join(corpusDir, m[1])); err != nil {
			t.Errorf("README.md lists %s: %v", m[1], err)
		}
		repos[m[2]], files = true, files+1
	}
	if files < 15 || len(repos) < 5 {
		t.Fatalf("the corpus lists %d manifests from %d repositories; want at least 15 from 5", files, len(repos))
	}
	set, err := bootstrapset.ForVersion(bootstrapset.Newest())
	if err != nil {
		t.Fatal(err)
	}
	cases, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			in, err := readFiles([]string{filepath.Join(corpusDir, c.Name())}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(in.FlowSchemas) == 0 {
				t.Fatal("no FlowSchema read")
			}
			n := nativeRoundTrip(t, in, set, Options{})
			t.Logf("%d FlowSchemas, %d levels: %d requests, 0 change level", len(in.FlowSchemas), len(in.PriorityLevels), n)
		})
	}
}

// TestRoundTripBootstrapSets imports kube-apiserver's own configuration of 1.29 and of 1.36
// (--include-bootstrap: its levels bind to themselves) and checks the round-trip property.
func TestRoundTripBootstrapSets(t *testing.T) {
	for _, v := range []string{"1.29", "1.36"} {
		t.Run(v, func(t *testing.T) {
			set, err := bootstrapset.ForVersion(v)
			if err != nil {
				t.Fatal(err)
			}
			n := nativeRoundTrip(t, setInput(set), set, Options{IncludeBootstrap: true})
			t.Logf("%s: %d requests, 0 change level", set.Module, n)
		})
	}
}
