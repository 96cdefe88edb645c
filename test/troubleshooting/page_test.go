package troubleshooting_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// page is the page under test.
var page = filepath.Join(envtestutil.RepoRoot(), "docs", "troubleshooting.md")

// block is a fenced code block of the page.
type block struct {
	// lang is the fence's info string: the language, then optional words (key=value).
	lang    string
	heading string // the section it is in
	lines   []string
}

// readBlocks returns the page's fenced code blocks.
func readBlocks(t *testing.T) []block { return readBlocksOf(t, page) }

// readBlocksOf returns the fenced code blocks of the Markdown file path.
func readBlocksOf(t *testing.T, path string) []block {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []block
	var cur *block
	heading := ""
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &block{lang: strings.TrimSpace(strings.TrimPrefix(line, "```")), heading: heading}
		case cur != nil && strings.HasPrefix(line, "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		case strings.HasPrefix(line, "#"):
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// commands returns the commands of a shell block: backslash-continued lines joined, blank
// lines dropped.
func commands(b block) []string {
	var out []string
	var cur strings.Builder
	for _, line := range b.lines {
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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kubeconfig,
		"HOME="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("%s: %v", command, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// placeholders are the page's placeholders and what the test puts in their place.
var placeholders = strings.NewReplacer("<name>", "tenants")

// metricName finds the metric names in the page's text.
var metricName = regexp.MustCompile(`\b(?:apiserver_flowcontrol|apf_operator)_[a-z_]+\b`)
