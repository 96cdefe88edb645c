package docs_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

// Classes of shell blocks (the fence's run=CLASS): offline blocks run here; the others say why
// they do not.
const (
	classOffline = "offline" // runs here: the CLI, helm template, kustomize build on files
	classCluster = "cluster" // needs a cluster (kubectl, helm install, a live apf-operator command)
	classBuild   = "build"   // builds or tests the project (make, go test): minutes, make test's own job
	classHost    = "host"    // changes the machine or the shell it runs in (/usr/local/bin, /etc, source)
)

// classes are the known classes.
var classes = map[string]bool{classOffline: true, classCluster: true, classBuild: true, classHost: true}

// shellLanguages are the fence languages of shell blocks, which must carry a class.
var shellLanguages = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true, "zsh": true}

// block is a fenced code block of a Markdown file.
type block struct {
	file  string // relative to the repository
	line  int    // of the opening fence
	lang  string
	attrs map[string]string // the info string's key=value words
	lines []string
}

func (b block) String() string { return b.file + ":" + strconv.Itoa(b.line) }

// pages are README.md and docs/*.md, relative to the repository.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(envtestutil.RepoRoot(), "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	out := []string{"README.md"}
	for _, d := range docs {
		out = append(out, filepath.Join("docs", filepath.Base(d)))
	}
	return out
}

// readBlocks returns the fenced blocks of the Markdown file rel (harness.CodeBlocks).
func readBlocks(t *testing.T, rel string) []block {
	t.Helper()
	read, err := harness.CodeBlocks(filepath.Join(envtestutil.RepoRoot(), rel))
	if err != nil {
		t.Fatal(err)
	}
	blocks := make([]block, len(read))
	for i, b := range read {
		blocks[i] = block{file: rel, line: b.Line, lang: b.Lang, attrs: b.Attrs, lines: b.Lines}
	}
	return blocks
}

// command is one command of a shell block and, in a console block, the output the block
// shows after it.
type command struct {
	text   string
	output []string
}

// commands returns the block's commands: in a block with "$ " prompts, the prompted lines,
// each with the lines after it as its output; else every line, backslash continuations
// joined, blank lines and comment lines dropped.
func commands(b block) []command {
	prompted := false
	for _, l := range b.lines {
		prompted = prompted || strings.HasPrefix(l, "$ ")
	}
	var out []command
	var cur strings.Builder
	for _, line := range b.lines {
		switch {
		case prompted && strings.HasPrefix(line, "$ "):
			out = append(out, command{text: strings.TrimPrefix(line, "$ ")})
		case prompted:
			if len(out) > 0 {
				out[len(out)-1].output = append(out[len(out)-1].output, line)
			}
		case strings.HasSuffix(line, `\`):
			cur.WriteString(strings.TrimSuffix(line, `\`))
		default:
			cur.WriteString(line)
			if c := strings.TrimSpace(cur.String()); c != "" && !strings.HasPrefix(c, "#") {
				out = append(out, command{text: c})
			}
			cur.Reset()
		}
	}
	return out
}
