package validate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

var corpus = filepath.Join("..", "..", "validation", "testdata")

// run calls Run and returns its exit code and outputs. Unless args name a --target, it checks
// with --target filter: most tests are about the admission rules; the default target (native)
// has tests of its own.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--target") }) {
		args = append([]string{"--target=filter"}, args...)
	}
	var out, errOut bytes.Buffer
	code := Run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestPassesOnValidSet(t *testing.T) {
	code, out, errOut := run(t, "", "-f", filepath.Join(corpus, "valid"))
	if code != ExitOK || out != "" {
		t.Fatalf("exit %d, findings:\n%s%s", code, out, errOut)
	}
	if !strings.HasPrefix(errOut, "10 object(s) checked for --target filter: 0 error(s), 0 warning(s)") {
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
	if !strings.HasPrefix(errOut, "10 object(s) checked for --target filter: 0 error(s)") {
		t.Fatalf("summary = %q, want the 10 default objects checked", errOut)
	}
}

// TestCorpus runs the command on every invalid manifest and checks that it produces exactly the
// findings the file's `# expect:` lines list, each at the line its `# want:` marker names
// (checkPositions).
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpus, "invalid", "*.yaml"))
	if err != nil || len(files) < 15 {
		t.Fatalf("corpus: %d files, %v", len(files), err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			checkCorpusFile(t, file)
		})
	}
}

// checkCorpusFile runs validate on file with extra arguments and checks its findings against
// the file's `# expect:` lines and `# want:` markers.
func checkCorpusFile(t *testing.T, file string, args ...string) {
	t.Helper()
	expects := expectations(t, file)
	code, findings, errOut := runJSON(t, append(args, "-f", file)...)
	if code != ExitError {
		t.Errorf("exit code %d, want %d (%s)", code, ExitError, errOut)
	}
	got := make([]string, len(findings))
	for i, f := range findings {
		got[i] = expectation(f)
	}
	if !matchPrefixes(got, expects) {
		t.Errorf("findings differ from the `# expect:` lines (each a prefix of one finding):\n got:\n%s\nwant:\n%s",
			strings.Join(got, "\n"), strings.Join(expects, "\n"))
	}
	for _, problem := range checkPositions(t, file, findings) {
		t.Error(problem)
	}
}

// matchPrefixes reports whether got and prefixes pair up, each prefix starting its own line of
// got.
func matchPrefixes(got, prefixes []string) bool {
	if len(got) != len(prefixes) {
		return false
	}
	used := make([]bool, len(got))
	for _, p := range prefixes {
		i := slices.IndexFunc(got, func(g string) bool { return strings.HasPrefix(g, p) })
		for i >= 0 && used[i] {
			next := slices.IndexFunc(got[i+1:], func(g string) bool { return strings.HasPrefix(g, p) })
			if next < 0 {
				return false
			}
			i += 1 + next
		}
		if i < 0 {
			return false
		}
		used[i] = true
	}
	return true
}

// expectation renders a finding as a corpus file's `# expect:` line does:
// DOC: [warning: ][FIELD: ]MESSAGE.
func expectation(f manifest.Finding) string {
	s := fmt.Sprintf("%d: ", f.Document)
	if f.Severity == manifest.SeverityWarning {
		s += "warning: "
	}
	if f.Field != "" {
		s += f.Field + ": "
	}
	return s + f.Message
}

// runJSON runs validate -o json and returns the exit code, the findings and standard error.
func runJSON(t *testing.T, args ...string) (int, []manifest.Finding, string) {
	t.Helper()
	code, out, errOut := run(t, "", append([]string{"-o", "json"}, args...)...)
	var got struct{ Findings []manifest.Finding }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("exit %d, output is not JSON: %v\n%s%s", code, err, out, errOut)
	}
	return code, got.Findings, errOut
}

func TestJSONOutput(t *testing.T) {
	file := filepath.Join(corpus, "invalid", "rp-hand-size-limit.yaml")
	code, out, _ := run(t, "", "-o", "json", "-f", file)
	var got struct {
		Findings []manifest.Finding `json:"findings"`
		Errors   int                `json:"errors"`
		Warnings int                `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	want := manifest.Finding{File: file, Document: 0, Line: 10, Column: 3, Kind: "RequestPriority", Name: "too-large-hand", Severity: "error",
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
		filepath.Join(dir, "a.yaml") + `:4:8: spec.priorityLevel: Duplicate value: 50: already used by RequestPriority "b"`,
		filepath.Join(dir, "nested", "b.yml") + `:4:8: spec.priorityLevel: Duplicate value: 50: already used by RequestPriority "a"`,
		`<stdin>:4:47: warning: spec.requestPriority.name: RequestPriority "elsewhere" not found`,
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
// and documents of comments only are skipped.
func TestWarningsAloneDoNotFail(t *testing.T) {
	fs := "# a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: skipped}\ndata: {a: x, a: y}\n---\n" +
		"apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: FlowSchema\nmetadata: {name: s}\n" +
		"spec: {matchingPriority: 1, requestPriority: {name: elsewhere}, match: []}\n"
	code, out, errOut := run(t, fs, "-")
	if code != ExitOK || strings.Count(out, ": warning: ") != 2 {
		t.Fatalf("exit %d, want 0 with two warnings:\n%s%s", code, out, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"-o", "xml", "-f", "x"}, {"--bogus"}, {"--exclude", "[", "-f", "x"}} {
		if code, _, _ := run(t, "", args...); code != ExitUsage {
			t.Errorf("Run(%q) = %d, want %d", args, code, ExitUsage)
		}
	}
	if code, out, _ := run(t, "", "-f", filepath.Join(t.TempDir(), "missing.yaml")); code != ExitError ||
		!strings.Contains(out, "cannot read") {
		t.Errorf("missing file: exit %d, %q", code, out)
	}
}

// expectations returns the `# expect: ` lines of a corpus file: DOC: [warning: ][FIELD: ]MESSAGE.
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

// TestNativeTargetOnProposal checks that --target native reports, on the proposal's
// configuration, exactly the FlowSchemas native.Project cannot project, each with its field:
// system-high (a resource without its subresource, a pattern over user names) and
// workload-high (a negated pattern over user names). Its four levels of 10 shares are past the
// default share budget (TestNativeShareBudget), so this test allows a 90% loss.
func TestNativeTargetOnProposal(t *testing.T) {
	file := filepath.Join(corpus, "valid", "proposal.yaml")
	code, out, errOut := run(t, "", "--target", "native", "--native-max-seat-loss-percent", "90", "-f", file)
	want := []string{
		file + `:49:5: spec.match[0].and: Invalid value: "resource": not expressible natively: resource is constrained but subresource is not`,
		file + `:56:7: spec.match[2].and[0].patternMatch: Invalid value: "system:controller:.*": not expressible natively`,
		file + `:79:7: spec.match[0].and[0].notPatternMatch: Invalid value: "system:serviceaccount:.*": not expressible natively`,
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitError || len(lines) != len(want) || !strings.HasPrefix(errOut, "10 object(s) checked for --target native: 3 error(s)") {
		t.Fatalf("exit %d, findings:\n%s%s", code, out, errOut)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("finding %d = %q, want prefix %q", i, lines[i], want[i])
		}
	}
	if got, want := reportedNames(t, file, 90), notProjected(t, file, 90); !slices.Equal(got, want) {
		t.Errorf("reported %v, native.Project does not project %v", got, want)
	}
}

// TestNativeShareBudget: the proposal's levels hold 40 shares, past the 27 that keep
// kube-apiserver's bootstrap levels (245 shares) within 10%: its two lowest levels are
// refused on spec.assuredConcurrencyShares with the arithmetic, as the projector refuses them.
func TestNativeShareBudget(t *testing.T) {
	file := filepath.Join(corpus, "valid", "proposal.yaml")
	code, out, _ := run(t, "", "--target", "native", "-f", file)
	var budget []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(line, "spec.assuredConcurrencyShares: Invalid value: 10: over the native share budget") &&
			strings.Contains(line, "floor(245×10/90) = 27") && strings.Contains(line, "already take 20") {
			budget = append(budget, line)
		}
	}
	if code != ExitError || len(budget) != 2 {
		t.Fatalf("exit %d, %d share budget findings, want 2:\n%s", code, len(budget), out)
	}
	if got, want := reportedNames(t, file, 10), notProjected(t, file, 10); !slices.Equal(got, want) {
		t.Errorf("reported %v, native.Project does not project %v", got, want)
	}
	if code, _, _ := run(t, "", "--target", "native", "--native-max-seat-loss-percent", "91", "-f", file); code != ExitUsage {
		t.Errorf("--native-max-seat-loss-percent 91: exit %d, want %d", code, ExitUsage)
	}
}

// reportedNames runs --target native -o json and returns kind/name of every finding, sorted
// and without repetition.
func reportedNames(t *testing.T, file string, maxSeatLoss int32) []string {
	t.Helper()
	_, out, _ := run(t, "", "--target", "native", "--native-max-seat-loss-percent", fmt.Sprint(maxSeatLoss), "-o", "json", "-f", file)
	var got struct{ Findings []manifest.Finding }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range got.Findings {
		names = append(names, f.Kind+"/"+f.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// notProjected asks native.Project directly which objects of file are not expressible.
func notProjected(t *testing.T, file string, maxSeatLoss int32) []string {
	t.Helper()
	rps, fss, err := manifest.LoadObjects([]string{file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan := native.Project(effective.Compute(rps, fss), native.Existing{MaxSeatLossPercent: &maxSeatLoss})
	var names []string
	for kind, results := range map[string]map[string]native.Result{
		"RequestPriority": plan.RequestPriorities, "FlowSchema": plan.FlowSchemaResults} {
		for name, r := range results {
			if !r.Projected && r.Reason != v1alpha1.ReasonRequestPriorityNotProjected {
				names = append(names, kind+"/"+name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// TestNativeCorpus checks every native-invalid manifest: accepted by the default target, and
// under --target native exactly the findings its `# expect:` lines list.
func TestNativeCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpus, "native-invalid", "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("corpus: %d files, %v", len(files), err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			if code, out, errOut := run(t, "", "-f", file); code != ExitOK || out != "" {
				t.Errorf("--target filter: exit %d, want %d without findings:\n%s%s", code, ExitOK, out, errOut)
			}
			checkCorpusFile(t, file, "--target", "native")
		})
	}
}

// TestNativeTargetPrecedenceExhausted gives more distinct matching priorities than native
// precedences between the suggested control-plane schemas and service-accounts: the FlowSchema
// of the last one in order is an error about its document.
func TestNativeTargetPrecedenceExhausted(t *testing.T) {
	n := native.MaxPrecedence - native.MinPrecedence + 1 // one more than fits
	var in strings.Builder
	in.WriteString("apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: RequestPriority\nmetadata: {name: p}\n" +
		"spec: {priorityLevel: 1, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1}\n")
	for i := range n {
		fmt.Fprintf(&in, "---\napiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: FlowSchema\n"+
			"metadata: {name: s%05d}\nspec: {matchingPriority: %d, requestPriority: {name: p}, "+
			"match: [{and: [{equals: {field: user, value: u%d}}]}]}\n", i, i, i)
	}
	code, out, _ := run(t, in.String(), "--target", "native", "-f", "-")
	// The RequestPriority takes lines 1-4, each FlowSchema 5 (a separator and 4): the last one's
	// first key is on line 4 + 5(n-1) + 2.
	want := fmt.Sprintf("<stdin>:%d:1: not projected: only %d distinct matching priorities fit between matching precedences %d and %d",
		4+5*(n-1)+2, n-1, native.MinPrecedence, native.MaxPrecedence-1)
	if code != ExitError || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, want) {
		t.Fatalf("exit %d, findings:\n%s\nwant one: %s", code, out, want)
	}
}

func TestTargetFlag(t *testing.T) {
	if code, _, errOut := run(t, "", "--target", "kube", "-f", "x"); code != ExitUsage ||
		!strings.Contains(errOut, `unsupported --target "kube": use filter or native`) {
		t.Errorf("--target kube: exit %d, %q", code, errOut)
	}
	if code, _, errOut := run(t, "", "--target", "native", "--native-unmatched", "nobody", "-f", "x"); code != ExitUsage ||
		!strings.Contains(errOut, `--native-unmatched: "nobody" is not one of "kube-apiserver", "operator"`) {
		t.Errorf("--native-unmatched nobody: exit %d, %q", code, errOut)
	}
	code, out, errOut := run(t, "", "--help")
	if code != ExitOK || errOut != "" || !strings.Contains(out, "--target string") ||
		!strings.Contains(out, "With --target native") {
		t.Errorf("--help: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
}
