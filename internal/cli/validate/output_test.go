package validate

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// update regenerates the golden files of this package: go test ./internal/cli/validate/ -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata with the current output")

// golden compares got with the file testdata/golden/NAME, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (rerun with -update if the change is intended):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestGoldenOutputs runs every output format over the invalid corpus and compares the output,
// byte for byte, with the golden files; the summary on standard error must agree with the JSON
// counts.
func TestGoldenOutputs(t *testing.T) {
	dir := filepath.Join(corpus, "invalid")
	var counts struct{ Errors, Warnings int }
	for _, format := range []string{outputText, outputJSON, outputGitHub} {
		t.Run(format, func(t *testing.T) {
			code, out, errOut := run(t, "", "-o", format, "-f", dir)
			if code != ExitError {
				t.Errorf("exit code %d, want %d", code, ExitError)
			}
			golden(t, filepath.Join("golden", "invalid."+format), out)
			if format == outputJSON {
				if err := json.Unmarshal([]byte(out), &counts); err != nil {
					t.Fatal(err)
				}
			}
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if !strings.Contains(lines[len(lines)-1], " error(s), ") {
				t.Errorf("the last line of standard error is not the summary: %q", errOut)
			}
		})
	}
	code, out, errOut := run(t, "", "-o", outputGitHub, "-f", dir)
	summary := fmt.Sprintf("object(s) checked for --target filter: %d error(s), %d warning(s)", counts.Errors, counts.Warnings)
	if code != ExitError || counts.Errors == 0 || !strings.Contains(errOut, summary) ||
		strings.Count(out, "::error ") != counts.Errors || strings.Count(out, "::warning ") != counts.Warnings {
		t.Errorf("exit %d; JSON counts %+v; summary %q; %d ::error and %d ::warning annotations", code, counts, errOut,
			strings.Count(out, "::error "), strings.Count(out, "::warning "))
	}
}

// TestLines checks the line of each finding in a stream with comments, a leading separator,
// separators with comments, CRLF line ends, an empty document and a List, and in a JSON file.
func TestLines(t *testing.T) {
	stream := strings.Join([]string{
		"# leading comment", // 1
		"---",               // 2
		"--- # an empty document",
		"apiVersion: v1", // 4
		"kind: ConfigMap",
		"metadata: {name: other}",
		"---",
		"apiVersion: flowcontrol.apf-operator.io/v1alpha1", // 8
		"kind: RequestPriority",
		"metadata: {name: a}",
		"spec:",
		"  priorityLevel: 7",
		"  assuredConcurrencyShares: -1", // 13
		"  queuesPerWidth: 1",
		"  queueLengthLimit: 1",
		"---",
		"apiVersion: v1", // 17
		"kind: List",
		"items:",
		"- apiVersion: flowcontrol.apf-operator.io/v1alpha1", // 20
		"  kind: RequestPriority",
		"  metadata: {name: b}",
		"  spec: {priorityLevel: 8, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1, bogus: 1}", // 23
		"- apiVersion: flowcontrol.apf-operator.io/v1alpha1",                                                        // 24
		"  kind: RequestPriority",
		"  metadata: {name: c}",
		"  spec:",
		"    priorityLevel: 9",
		"    assuredConcurrencyShares: 1",
		"    queuesPerWidth: 1",
		"    queueLengthLimit: -1", // 31
		"",
	}, "\r\n")
	jsonFile := filepath.Join(t.TempDir(), "x.json")
	writeFile(t, jsonFile, "{\n  \"apiVersion\": \"flowcontrol.apf-operator.io/v1alpha1\",\n  \"kind\": \"RequestPriority\",\n"+
		"  \"metadata\": {\"name\": \"d\"},\n  \"spec\": {\n    \"priorityLevel\": 10,\n    \"assuredConcurrencyShares\": 1,\n"+
		"    \"queuesPerWidth\": 2,\n    \"queueLengthLimit\": 1\n  }\n}\n")
	_, out, _ := run(t, stream, "-o", "json", "-f", "-", "-f", jsonFile)
	var got struct{ Findings []manifest.Finding }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{
		"<stdin> a spec.assuredConcurrencyShares": 13,
		"<stdin> b spec.bogus":                    23, // an item of a List: the line in the List
		"<stdin> c spec.queueLengthLimit":         31,
		jsonFile + " d spec.handSize":             5, // an absent field: the line of its parent
	}
	seen := map[string]int{}
	for _, f := range got.Findings {
		seen[f.File+" "+f.Name+" "+f.Field] = f.Line
	}
	for key, line := range want {
		if seen[key] != line {
			t.Errorf("%s: line %d, want %d; findings:\n%s", key, seen[key], line, out)
		}
	}
}

// TestGitHubCommand checks the workflow-command syntax and GitHub's escaping: %, CR and LF in
// the message; also ':' and ',' in properties; no file= for standard input.
func TestGitHubCommand(t *testing.T) {
	f := manifest.Finding{File: "dir,1/a:b%.yaml", Line: 7, Column: 5, Kind: "FlowSchema", Name: "x", Severity: manifest.SeverityError,
		Field: "spec.match[0]", Message: "50% of a: b,\r\nc"}
	want := "::error file=dir%2C1/a%3Ab%25.yaml,line=7,col=5,title=FlowSchema/x spec.match[0]::50%25 of a: b,%0D%0Ac"
	if got := githubCommand(f); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	f = manifest.Finding{File: manifest.StdinName, Line: 3, Column: 2, Kind: "RequestPriority", Name: "y", Severity: manifest.SeverityWarning, Message: "m"}
	want = "::warning title=RequestPriority/y (<stdin> line 3 column 2)::m"
	if got := githubCommand(f); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	f = manifest.Finding{File: "gone.yaml", Severity: manifest.SeverityError, Message: "cannot read: no such file"}
	want = "::error file=gone.yaml,title=apf-operator validate::cannot read: no such file"
	if got := githubCommand(f); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestKustomizeBuildOnStdin pipes the output of the real kustomize over testdata/kustomize
// into `validate -f -`: the overlay's error and warning are reported at their lines in the
// stream, the ConfigMap is skipped with a note, and the exit code and counts say so. Without
// the kustomize binary the captured output of the same build is checked instead.
func TestKustomizeBuildOnStdin(t *testing.T) {
	captured := filepath.Join("kustomize", "prod.build.yaml")
	stream := kustomizeBuild(t, filepath.Join("testdata", "kustomize", "overlays", "prod"))
	if stream == "" {
		data, err := os.ReadFile(filepath.Join("testdata", captured))
		if err != nil {
			t.Fatal(err)
		}
		stream = string(data)
	} else {
		golden(t, captured, stream)
	}
	code, out, errOut := run(t, stream, "-o", "json", "-f", "-")
	var got struct {
		Findings         []manifest.Finding
		Errors, Warnings int
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []manifest.Finding{
		{File: manifest.StdinName, Document: 1, Line: lineOf(t, stream, "    name: tenants-prod"), Column: 5, Kind: "FlowSchema", Name: "tenants",
			Severity: manifest.SeverityWarning, Field: "spec.requestPriority.name"},
		{File: manifest.StdinName, Document: 2, Line: lineOf(t, stream, "  handSize: 12"), Column: 3, Kind: "RequestPriority", Name: "tenants",
			Severity: manifest.SeverityError, Field: "spec.handSize"},
	}
	if code != ExitError || got.Errors != 1 || got.Warnings != 1 || len(got.Findings) != len(want) {
		t.Fatalf("exit %d, %s%s", code, out, errOut)
	}
	for i := range want {
		f := got.Findings[i]
		f.Message = ""
		if f != want[i] {
			t.Errorf("finding %d = %+v, want %+v", i, f, want[i])
		}
	}
	if !strings.HasSuffix(errOut, "2 object(s) checked for --target filter: 1 error(s), 1 warning(s); 1 document(s) of other kinds skipped\n") {
		t.Errorf("summary = %q", errOut)
	}
	_, out, _ = run(t, stream, "-o", "github", "-f", "-")
	if strings.Contains(out, "file=") || !strings.Contains(out, "::error title=RequestPriority/tenants spec.handSize (<stdin> line ") {
		t.Errorf("github annotations of standard input:\n%s", out)
	}
}

// kustomizeBuild runs the pinned kustomize (bin/kustomize-<version>) build dir, or returns ""
// when it has not been built.
func kustomizeBuild(t *testing.T, dir string) string {
	t.Helper()
	bin, err := envtestutil.Tool("kustomize")
	if err != nil {
		t.Logf("%v: checking the captured build output instead", err)
		return ""
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "build", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", dir, err, stderr.String())
	}
	return stdout.String()
}

// lineOf returns the 1-based line of stream that equals text.
func lineOf(t *testing.T, stream, text string) int {
	t.Helper()
	for i, l := range strings.Split(stream, "\n") {
		if l == text {
			return i + 1
		}
	}
	t.Fatalf("no line %q in:\n%s", text, stream)
	return 0
}

// TestYAMLOutput: -o yaml holds the same findings and counts as -o json.
func TestYAMLOutput(t *testing.T) {
	file := filepath.Join(corpus, "invalid", "rp-lending.yaml")
	_, jsonOut, _ := run(t, "", "-o", "json", "-f", file)
	code, yamlOut, _ := run(t, "", "-o", "yaml", "-f", file)
	converted, err := yaml.YAMLToJSON([]byte(yamlOut))
	if err != nil {
		t.Fatalf("-o yaml is not YAML: %v\n%s", err, yamlOut)
	}
	var fromJSON, fromYAML any
	if err := json.Unmarshal([]byte(jsonOut), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(converted, &fromYAML); err != nil {
		t.Fatal(err)
	}
	if code != ExitError || !reflect.DeepEqual(fromJSON, fromYAML) || !strings.Contains(yamlOut, "column: ") {
		t.Errorf("exit %d; -o yaml:\n%s\ndiffers from -o json:\n%s", code, yamlOut, jsonOut)
	}
}
