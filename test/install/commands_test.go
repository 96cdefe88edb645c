package install

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// shellCommands returns the commands of the fenced ```sh blocks of a Markdown file (of the
// section whose heading is section, or of the whole file when section is ""), one per
// command: comment lines and blank lines dropped, backslash continuations joined.
func shellCommands(t *testing.T, file, section string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(envtestutil.RepoRoot(), file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	var pending string
	inSection, inBlock := section == "", false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case !inBlock && strings.HasPrefix(line, "#") && section != "":
			inSection = strings.TrimLeft(line, "# ") == section
		case !inBlock && (line == "```sh" || strings.HasPrefix(line, "```sh ")): // ```sh run=cluster (test/docs's class)
			inBlock = true
		case inBlock && line == "```":
			inBlock = false
		case inBlock && inSection && line != "" && !strings.HasPrefix(line, "#"):
			if cont, ok := strings.CutSuffix(line, `\`); ok {
				pending += cont
				continue
			}
			cmds = append(cmds, strings.Join(strings.Fields(pending+line), " "))
			pending = ""
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cmds) == 0 {
		t.Fatalf("no ```sh commands in %s (section %q)", file, section)
	}
	return cmds
}

func TestShellCommandsJoinsContinuationsAndDropsComments(t *testing.T) {
	dir := t.TempDir()
	md := "# Doc\n\n## A\n\n```sh\n# a comment\nkubectl create namespace x\nkubectl label namespace x \\\n  a=b c=d\n```\n\n" +
		"## B\n\n  ```sh run=cluster\n  helm install r ./chart\n  ```\n\n```yaml\nkind: X\n```\n"
	path := filepath.Join(dir, "doc.md")
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(envtestutil.RepoRoot(), path)
	if err != nil {
		t.Fatal(err)
	}
	all := shellCommands(t, rel, "")
	want := []string{"kubectl create namespace x", "kubectl label namespace x a=b c=d", "helm install r ./chart"}
	if strings.Join(all, "|") != strings.Join(want, "|") {
		t.Errorf("all commands: %q; want %q", all, want)
	}
	if b := shellCommands(t, rel, "B"); len(b) != 1 || b[0] != "helm install r ./chart" {
		t.Errorf("section B: %q", b)
	}
}
