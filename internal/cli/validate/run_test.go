package validate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

var corpus = filepath.Join("..", "..", "validation", "testdata")

// run calls Run and returns its exit code and outputs.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestPassesOnValidSet(t *testing.T) {
	code, out, errOut := run(t, "", "-f", filepath.Join(corpus, "valid"))
	if code != ExitOK || out != "" {
		t.Fatalf("exit %d, findings:\n%s%s", code, out, errOut)
	}
	if !strings.HasPrefix(errOut, "10 object(s) checked: 0 error(s), 0 warning(s)") {
		t.Fatalf("summary = %q, want the proposal's 10 objects checked", errOut)
	}
}

// TestPassesOnSamples checks config/samples: no error (warnings, such as a reference to a
// default object that is not among the samples, are allowed).
func TestPassesOnSamples(t *testing.T) {
	samples := filepath.Join(envtestutil.RepoRoot(), "config", "samples")
	code, out, errOut := run(t, "", "-f", samples)
	if code != ExitOK || strings.Contains(errOut, " 0 object(s)") {
		t.Fatalf("exit %d, findings:\n%s%s", code, out, errOut)
	}
}

// TestPassesOnDefaults feeds the operator's default objects through standard input.
func TestPassesOnDefaults(t *testing.T) {
	var in strings.Builder
	for _, rp := range defaults.RequestPriorities() {
		rp.TypeMeta = typeMeta("RequestPriority")
		writeDoc(t, &in, &rp)
	}
	for _, fs := range defaults.FlowSchemas() {
		fs.TypeMeta = typeMeta("FlowSchema")
		writeDoc(t, &in, &fs)
	}
	code, out, errOut := run(t, in.String(), "-f", "-")
	if code != ExitOK || out != "" {
		t.Fatalf("exit %d, findings:\n%s%s", code, out, errOut)
	}
	if !strings.HasPrefix(errOut, "10 object(s) checked: 0 error(s)") {
		t.Fatalf("summary = %q, want the 10 default objects checked", errOut)
	}
}

// TestCorpus runs the command on every invalid manifest and checks that it produces exactly the
// findings the file's `# expect:` lines list.
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpus, "invalid", "*.yaml"))
	if err != nil || len(files) < 15 {
		t.Fatalf("corpus: %d files, %v", len(files), err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			expects := expectations(t, file)
			code, out, errOut := run(t, "", "-f", file)
			if code != ExitError {
				t.Errorf("exit code %d, want %d (%s)", code, ExitError, errOut)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != len(expects) {
				t.Errorf("%d findings, want %d:\n%s", len(lines), len(expects), out)
			}
			for _, want := range expects {
				if !anyHasPrefix(lines, file+":"+want) {
					t.Errorf("no finding %q in:\n%s", file+":"+want, out)
				}
			}
		})
	}
}

func TestJSONOutput(t *testing.T) {
	file := filepath.Join(corpus, "invalid", "rp-hand-size-limit.yaml")
	code, out, _ := run(t, "", "-o", "json", "-f", file)
	var got struct {
		Findings []finding `json:"findings"`
		Errors   int       `json:"errors"`
		Warnings int       `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	want := finding{File: file, Document: 0, Kind: "RequestPriority", Name: "too-large-hand", Severity: "error",
		Field: "spec.handSize"}
	if code != ExitError || got.Errors != 1 || got.Warnings != 0 || len(got.Findings) != 1 {
		t.Fatalf("exit %d, %+v", code, got)
	}
	f := got.Findings[0]
	msg := f.Message
	f.Message = ""
	if f != want || !strings.HasPrefix(msg, "Invalid value: 12: ff(queuesPerWidth=64, handSize=12) = ") {
		t.Fatalf("finding = %+v %q, want %+v with the computed figure", f, msg, want)
	}
}

func TestCrossSetRules(t *testing.T) {
	rp := func(name string, level int) string {
		return "apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: RequestPriority\nmetadata: {name: " + name +
			"}\nspec: {priorityLevel: " + strconv.Itoa(level) + ", assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1}\n"
	}
	fs := "apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: FlowSchema\nmetadata: {name: s}\n" +
		"spec: {matchingPriority: 1, requestPriority: {name: elsewhere}, match: [{and: []}]}\n"
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.yaml"), rp("a", 50))
	writeFile(t, filepath.Join(dir, "nested", "b.yml"), rp("b", 50))
	writeFile(t, filepath.Join(dir, "nested", "notes.txt"), "not a manifest")
	code, out, _ := run(t, fs, "-f", dir, "-")
	want := []string{
		filepath.Join(dir, "a.yaml") + `:0: spec.priorityLevel: Duplicate value: 50: already used by RequestPriority "b"`,
		filepath.Join(dir, "nested", "b.yml") + `:0: spec.priorityLevel: Duplicate value: 50: already used by RequestPriority "a"`,
		`<stdin>:0: warning: spec.requestPriority.name: RequestPriority "elsewhere" not found`,
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitError || len(lines) != len(want) {
		t.Fatalf("exit %d, findings:\n%s", code, out)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("finding %d = %q, want prefix %q", i, lines[i], want[i])
		}
	}
}

// TestWarningsAloneDoNotFail also shows that documents of other APIs, even with duplicate keys,
// and documents that are not objects are skipped.
func TestWarningsAloneDoNotFail(t *testing.T) {
	fs := "# a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: skipped}\ndata: {a: x, a: y}\n---\n" +
		"- a list\n---\nplain scalar\n---\n" +
		"apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: FlowSchema\nmetadata: {name: s}\n" +
		"spec: {matchingPriority: 1, requestPriority: {name: elsewhere}, match: []}\n"
	code, out, errOut := run(t, fs, "-")
	if code != ExitOK || strings.Count(out, ": warning: ") != 2 {
		t.Fatalf("exit %d, want 0 with two warnings:\n%s%s", code, out, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"-o", "yaml", "-f", "x"}, {"--bogus"}} {
		if code, _, _ := run(t, "", args...); code != ExitUsage {
			t.Errorf("Run(%q) = %d, want %d", args, code, ExitUsage)
		}
	}
	if code, out, _ := run(t, "", "-f", filepath.Join(t.TempDir(), "missing.yaml")); code != ExitError ||
		!strings.Contains(out, "cannot read") {
		t.Errorf("missing file: exit %d, %q", code, out)
	}
}

// expectations returns the `# expect: ` lines of a corpus file.
func expectations(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var expects []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if e, ok := strings.CutPrefix(s.Text(), "# expect: "); ok {
			expects = append(expects, e)
		}
	}
	if len(expects) == 0 {
		t.Fatalf("%s has no `# expect:` line", file)
	}
	return expects
}

func anyHasPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: kind}
}

func writeDoc(t *testing.T, b *strings.Builder, obj any) {
	t.Helper()
	data, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString("---\n")
	b.Write(data)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
