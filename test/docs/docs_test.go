package docs_test

import (
	"flag"
	"strings"
	"testing"
)

// TestEveryShellBlockIsClassified: every fenced block has a language, and every shell block a
// known class (run=offline, cluster, build or host), so that no block is skipped silently.
func TestEveryShellBlockIsClassified(t *testing.T) {
	n := 0
	for _, page := range pages(t) {
		for _, b := range readBlocks(t, page) {
			switch {
			case b.lang == "":
				t.Errorf("%s: a block without a language: name it (sh, console, yaml, text, ...) so that a shell block cannot hide", b)
			case b.lang == "text" && looksLikeShell(b):
				t.Errorf("%s: a ```text block that starts with a command (%q): make it ```sh or ```console with a class", b, b.lines[0])
			case !shellLanguages[b.lang]:
			case !classes[b.attrs["run"]]:
				t.Errorf("%s: shell block with run=%q: classify it in its fence, e.g. ```%s run=offline "+
					"(run by test/docs: add its commands' shape to expectations), or run=cluster, run=build, run=host "+
					"(see test/docs's package documentation)", b, b.attrs["run"], b.lang)
			default:
				n++
			}
		}
	}
	if n == 0 {
		t.Error("no classified shell block in README.md and docs/")
	}
}

// TestOfflineBlocksRun runs every command of every run=offline block, in a fresh work directory
// per block holding the page's files (its blocks with file=NAME), and checks its exit code and output against expectations (and a console block's
// shown output). A command without an expectation fails, and so does an expectation no page
// uses any more.
func TestOfflineBlocksRun(t *testing.T) {
	used := map[string]bool{}
	for _, page := range pages(t) {
		blocks := readBlocks(t, page)
		for _, b := range blocks {
			if !shellLanguages[b.lang] || b.attrs["run"] != classOffline {
				continue
			}
			t.Run(b.String(), func(t *testing.T) {
				dir := workDir(t)
				writePageFiles(t, dir, blocks)
				cmds := commands(b)
				if len(cmds) == 0 {
					t.Fatal("a run=offline block without commands")
				}
				for _, c := range cmds {
					key := strings.Join(strings.Fields(c.text), " ")
					want, ok := expectations[key]
					if !ok {
						t.Errorf("no expectation for the command %q: add its shape (exit code, key lines on stdout and stderr) to expectations", key)
						continue
					}
					used[key] = true
					r := run(t, dir, c.text)
					want.check(t, key, r)
					if len(c.output) > 0 && b.attrs["output"] != "example" {
						wantShownOutput(t, c.output, r)
					}
				}
			})
		}
	}
	if flag.Lookup("test.run").Value.String() != "" {
		return // a selection of blocks: the others' expectations are not stale
	}
	for key := range expectations {
		if !used[key] {
			t.Errorf("expectations has %q, which no run=offline block of README.md or docs/ runs: remove it, or classify its block", key)
		}
	}
}

// commandWords start the lines of a shell session; a ```text block must not start with one.
var commandWords = []string{"$ ", "apf-operator ", "kubectl ", "kubectl-apf ", "helm ", "kustomize ", "make ", "go "}

// looksLikeShell says whether the block's first line is a command.
func looksLikeShell(b block) bool {
	for _, w := range commandWords {
		if len(b.lines) > 0 && strings.HasPrefix(b.lines[0], w) {
			return true
		}
	}
	return false
}
