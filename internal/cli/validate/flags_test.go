package validate

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/internal/manifest"
)

// rpDoc is a valid RequestPriority document.
const rpDoc = "apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: RequestPriority\nmetadata: {name: p}\n" +
	"spec: {priorityLevel: 7, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1}\n"

// fsWarningDoc is a FlowSchema whose only finding is a warning (its RequestPriority is not in
// the set).
const fsWarningDoc = "apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: FlowSchema\nmetadata: {name: s}\n" +
	"spec: {matchingPriority: 1, requestPriority: {name: elsewhere}, match: [{and: []}]}\n"

func TestStrict(t *testing.T) {
	if code, out, errOut := run(t, fsWarningDoc, "-f", "-"); code != ExitOK || !strings.Contains(out, ": warning: ") {
		t.Errorf("without --strict: exit %d, want %d with a warning:\n%s%s", code, ExitOK, out, errOut)
	}
	if code, out, errOut := run(t, fsWarningDoc, "--strict", "-f", "-"); code != ExitError || !strings.Contains(out, ": warning: ") {
		t.Errorf("--strict: exit %d, want %d with the warning:\n%s%s", code, ExitError, out, errOut)
	}
	if code, out, errOut := run(t, rpDoc, "--strict", "-f", "-"); code != ExitOK || out != "" {
		t.Errorf("--strict without findings: exit %d, want %d:\n%s%s", code, ExitOK, out, errOut)
	}
}

// TestAllowEmpty: an empty directory, a stream of other kinds (an empty kustomize build) and
// an empty standard input fail unless --allow-empty.
func TestAllowEmpty(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	for name, c := range map[string]struct {
		stdin string
		path  string
	}{
		"empty directory": {"", t.TempDir()},
		"other kinds":     {"", dir},
		"empty stdin":     {"", "-"},
		"comment only":    {"# nothing\n---\n", "-"},
	} {
		code, out, errOut := run(t, c.stdin, "-f", c.path)
		if code != ExitError || !strings.Contains(out, emptyMessage) || !strings.Contains(errOut, ": 1 error(s)") {
			t.Errorf("%s: exit %d, want %d with %q:\n%s%s", name, code, ExitError, emptyMessage, out, errOut)
		}
		if code, out, errOut := run(t, c.stdin, "--allow-empty", "-f", c.path); code != ExitOK || out != "" {
			t.Errorf("%s, --allow-empty: exit %d, want %d:\n%s%s", name, code, ExitOK, out, errOut)
		}
	}
}

// TestExcludeDirectoriesAndFiles: --exclude leaves out a directory searched and a file given by name.
func TestExcludeDirectoriesAndFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keep", "rp.yaml"), rpDoc)
	writeFile(t, filepath.Join(dir, "skip", "broken.yaml"), "{{ .Values }}: [\n")
	if code, out, errOut := run(t, "", "-f", dir, "--exclude", "skip"); code != ExitOK || out != "" ||
		!strings.HasPrefix(errOut, "1 object(s) checked") {
		t.Errorf("--exclude skip: exit %d:\n%s%s", code, out, errOut)
	}
	file := filepath.Join(dir, "skip", "broken.yaml")
	if code, out, errOut := run(t, "", "-f", file, "--exclude", "broken.yaml"); code != ExitError ||
		!strings.Contains(out, emptyMessage) {
		t.Errorf("an excluded file given by name: exit %d, want %d, nothing checked:\n%s", code, ExitError, errOut)
	}
}

// TestNativeObjectsHint: kube-apiserver's own objects are a warning each that names them and
// says how to import them, at the object's first key.
func TestNativeObjectsHint(t *testing.T) {
	stream := rpDoc + "---\napiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: PriorityLevelConfiguration\n" +
		"metadata: {name: workload-low}\nspec: {type: Limited}\n---\n# a comment\napiVersion: v1\nkind: List\nitems:\n" +
		"- apiVersion: flowcontrol.apiserver.k8s.io/v1\n  kind: FlowSchema\n  metadata: {name: global-default}\n"
	code, out, errOut := run(t, stream, "-f", "-")
	want := []string{
		`<stdin>:6:1: warning: flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration "workload-low" is kube-apiserver's own ` +
			"flow control object, not checked: apf-operator manages RequestPriority and FlowSchema objects; convert it with " +
			"`apf-operator import -f -`",
		`<stdin>:15:3: warning: flowcontrol.apiserver.k8s.io/v1 FlowSchema "global-default" is kube-apiserver's own`,
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitOK || len(lines) != len(want) || !strings.HasPrefix(errOut, "1 object(s) checked for --target filter: 0 error(s), 2 warning(s)") {
		t.Fatalf("exit %d, want %d with two warnings:\n%s%s", code, ExitOK, out, errOut)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("finding %d = %q, want prefix %q", i, lines[i], want[i])
		}
	}
	if code, _, _ := run(t, stream, "--strict", "-f", "-"); code != ExitError {
		t.Errorf("--strict: exit %d, want %d", code, ExitError)
	}
}

// TestSyntaxErrorAtFileLine: a YAML error in a later document is reported at its line in the
// file, not in the document.
func TestSyntaxErrorAtFileLine(t *testing.T) {
	stream := rpDoc + "---\n# a comment\napiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: FlowSchema\n" +
		"metadata: {name: broken\n" + // line 9
		"spec: {}\n---\napiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: RequestPriority\nmetadata: {name: q}\n" +
		"spec:\n  priorityLevel: 8\n  priorityLevel: 9\n" // line 17: a duplicate key
	code, out, _ := run(t, stream, "-f", "-")
	want := "<stdin>:9:1: not valid YAML: did not find expected ',' or '}'\n" +
		"<stdin>:17:3: not valid YAML: key \"priorityLevel\" already set in map\n"
	if code != ExitError || out != want {
		t.Errorf("exit %d, findings:\n%s\nwant:\n%s", code, out, want)
	}
}

// TestTypeErrorsPerField: two values of the wrong type in one object are two findings in the
// API server's words, with no Go type name, and the other rules still run on the object.
func TestTypeErrorsPerField(t *testing.T) {
	stream := "apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: RequestPriority\nmetadata: {name: Bad_Name}\n" +
		"spec:\n  priorityLevel: 300\n  assuredConcurrencyShares: 10\n  queuesPerWidth: \"8\"\n  handSize: [8]\n" +
		"  queueLengthLimit: 0\n  lendablePercent: 150\n"
	code, out, _ := run(t, stream, "-f", "-")
	want := []string{
		`<stdin>:3:12: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain`,
		`<stdin>:7:3: spec.queuesPerWidth: Invalid value: "string": spec.queuesPerWidth in body must be of type integer: "string"`,
		`<stdin>:8:3: spec.handSize: Invalid value: "array": spec.handSize in body must be of type integer: "array"`,
		`<stdin>:9:3: spec.queueLengthLimit: Invalid value: 0: must be between 1 and 100000`,
		`<stdin>:10:3: spec.lendablePercent: Invalid value: 150: must be between 0 and 100`,
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitError || len(lines) != len(want) || strings.Contains(out, "Go ") || strings.Contains(out, "int32") {
		t.Fatalf("exit %d, findings:\n%s\nwant %d", code, out, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("finding %d = %q, want prefix %q", i, lines[i], want[i])
		}
	}
}

// TestFindingsSorted: findings come by file, line and column, whatever check found them first
// (the duplicate name, found before the rules run, is on a later line than a rule's error).
func TestFindingsSorted(t *testing.T) {
	code, findings, _ := runJSON(t, "-f", filepath.Join(corpus, "invalid"))
	if code != ExitError || len(findings) < 20 {
		t.Fatalf("exit %d, %d findings", code, len(findings))
	}
	less := func(a, b manifest.Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	}
	if !slices.IsSortedFunc(findings, less) {
		t.Errorf("findings not sorted by file, line and column: %+v", findings)
	}
	stream := "apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: RequestPriority\nmetadata: {name: p}\n" +
		"spec: {priorityLevel: 7, assuredConcurrencyShares: -1, queuesPerWidth: 1, queueLengthLimit: 1}\n---\n" + rpDoc
	_, out, _ := run(t, stream, "-f", "-")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "<stdin>:4:26: spec.assuredConcurrencyShares: Invalid value: -1") ||
		!strings.HasPrefix(lines[1], `<stdin>:8:12: metadata.name: Duplicate value: "p": RequestPriority "p" is also defined at <stdin>:3:12`) {
		t.Errorf("findings:\n%s", out)
	}
}

// TestSchemaEdgeCases: a name of the wrong type is one finding on metadata.name (no "name the
// object" besides); kube-openapi's format error, which has no field path, is dropped when
// the field's type error already says it; a spec that is no object is one finding.
func TestSchemaEdgeCases(t *testing.T) {
	stream := "apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: RequestPriority\nmetadata: {name: 5}\n" +
		"spec: {priorityLevel: 3, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1}\n---\n" +
		"apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: FlowSchema\nmetadata: {name: x}\nspec: hello\n---\n" +
		"apiVersion: flowcontrol.apf-operator.io/v1alpha1\nkind: FlowSchema\nmetadata: {name: z}\n" +
		"spec: {matchingPriority: 1.5, requestPriority: {name: p}, match: [{and: []}]}\n" + "---\n" + rpDoc
	code, out, _ := run(t, stream, "-f", "-")
	want := "<stdin>:3:12: metadata.name: Invalid value: a number cannot be decoded as string\n" +
		"<stdin>:9:1: spec: Invalid value: \"string\": spec in body must be of type object: \"string\"\n" +
		"<stdin>:14:8: spec.matchingPriority: Invalid value: \"float64\": spec.matchingPriority in body must be of type int32: \"float64\"\n"
	if code != ExitError || out != want {
		t.Errorf("exit %d, findings:\n%s\nwant:\n%s", code, out, want)
	}
}
