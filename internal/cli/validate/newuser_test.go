package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// runDefault runs validate with the flags as given (the default target included).
func runDefault(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestMisspelledOrMissingTypeIsAnError: a typo in the API group, an unknown version of it, and
// a document without apiVersion or kind are errors on apiVersion or kind, never "of other
// kinds, skipped", even though kubectl apply would refuse them all.
func TestMisspelledOrMissingTypeIsAnError(t *testing.T) {
	body := "metadata: {name: p}\nspec: {priorityLevel: 7, assuredConcurrencyShares: 1, queuesPerWidth: 1, queueLengthLimit: 1}\n"
	for name, c := range map[string]struct{ doc, want string }{
		"group typo":      {"apiVersion: flowcontrol.apf-operater.io/v1alpha1\nkind: RequestPriority\n" + body, `<stdin>:1:1: apiVersion: unknown API group "flowcontrol.apf-operater.io": did you mean flowcontrol.apf-operator.io/v1alpha1?`},
		"family group":    {"apiVersion: autopilot.apf-operator.io/v1\nkind: RequestPriority\n" + body, `apiVersion: unknown API group "autopilot.apf-operator.io"`},
		"unknown version": {"apiVersion: flowcontrol.apf-operator.io/v1beta9\nkind: RequestPriority\n" + body, `apiVersion: unsupported version "flowcontrol.apf-operator.io/v1beta9"`},
		"no apiVersion":   {"kind: RequestPriority\n" + body, `<stdin>:1:1: apiVersion: Required value`},
		"no kind":         {"apiVersion: flowcontrol.apf-operator.io/v1alpha1\n" + body, `<stdin>:1:1: kind: Required value`},
		"not an object":   {"- a list\n", `<stdin>:1:1: not a Kubernetes object`},
	} {
		for _, strict := range []bool{false, true} {
			args := []string{"-f", "-"}
			if strict {
				args = append(args, "--strict")
			}
			code, out, errOut := runDefault(t, c.doc, args...)
			if code != ExitError || !strings.Contains(out, c.want) || strings.Contains(errOut, "skipped") {
				t.Errorf("%s (strict %v): exit %d, want %d with %q:\n%s%s", name, strict, code, ExitError, c.want, out, errOut)
			}
		}
	}
}

// TestEmptyInputCountsAgree: with nothing checked, the JSON counts, the summary and the exit
// code all say one error.
func TestEmptyInputCountsAgree(t *testing.T) {
	code, out, errOut := runDefault(t, "", "-o", "json", "-f", "-")
	var doc struct{ Errors int }
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != ExitError || doc.Errors != 1 ||
		!strings.Contains(out, emptyMessage) || !strings.Contains(errOut, ": 1 error(s)") {
		t.Errorf("exit %d, errors %d (%v), want %d and 1:\n%s%s", code, doc.Errors, err, ExitError, out, errOut)
	}
	if code, out, errOut := runDefault(t, "", "-o", "json", "--allow-empty", "-f", "-"); code != ExitOK ||
		!strings.Contains(out, `"errors": 0`) {
		t.Errorf("--allow-empty: exit %d:\n%s%s", code, out, errOut)
	}
}

// TestCommentOnlyDocumentIsNotOtherKinds: a document of comments only is neither checked nor
// counted among the documents of other kinds.
func TestCommentOnlyDocumentIsNotOtherKinds(t *testing.T) {
	code, out, errOut := runDefault(t, "# the team's levels\n---\n"+rpDoc, "-f", "-")
	if code != ExitOK || strings.Contains(errOut, "skipped") || errOut != "1 object(s) checked for --target native: 0 error(s), 0 warning(s)\n" {
		t.Errorf("exit %d:\n%s%s", code, out, errOut)
	}
}

// TestDuplicateLevelNamesTheOtherFile: the duplicate-level error says where the other
// RequestPriority at that level is written.
func TestDuplicateLevelNamesTheOtherFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	writeFile(t, a, rpDoc)
	writeFile(t, b, strings.Replace(rpDoc, "name: p", "name: q", 1))
	code, out, _ := runDefault(t, "", "-f", a, "-f", b)
	if code != ExitError || !strings.Contains(out, `spec.priorityLevel: Duplicate value: 7: already used by RequestPriority "p"`) ||
		!strings.Contains(out, `("p" at `+a+`:4:8)`) {
		t.Errorf("exit %d, want the other object's FILE:LINE:COLUMN:\n%s", code, out)
	}
}

// TestDefaultTargetIsNative: without --target, the share budget of the chart's default
// enforcement (native) applies, and the summary names the target.
func TestDefaultTargetIsNative(t *testing.T) {
	greedy := strings.Replace(rpDoc, "assuredConcurrencyShares: 1", "assuredConcurrencyShares: 200", 1)
	code, out, errOut := runDefault(t, greedy, "-f", "-")
	if code != ExitError || !strings.Contains(out, "over the native share budget") ||
		!strings.Contains(errOut, "checked for --target native:") {
		t.Errorf("default: exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = runDefault(t, greedy, "--target", "filter", "-f", "-")
	if code != ExitOK || !strings.Contains(errOut, "checked for --target filter: 0 error(s)") {
		t.Errorf("--target filter: exit %d:\n%s%s", code, out, errOut)
	}
}

// TestFleetPerDirectory: the fleet example (one directory per cluster, the same objects in
// each) is duplicates as one set, and clean with --per-directory, one set per cluster.
func TestFleetPerDirectory(t *testing.T) {
	clusters := filepath.Join(envtestutil.RepoRoot(), "examples", "fleet", "clusters")
	code, out, _ := runDefault(t, "", "-f", clusters)
	if code != ExitError || !strings.Contains(out, "Duplicate value") {
		t.Errorf("one set: exit %d, want duplicates across clusters:\n%s", code, out)
	}
	code, out, errOut := runDefault(t, "", "--strict", "--per-directory", "-f", clusters)
	entries, err := os.ReadDir(clusters)
	if err != nil {
		t.Fatal(err)
	}
	if code != ExitOK || out != "" || !strings.Contains(errOut, fmt.Sprintf("in %d set(s): 0 error(s), 0 warning(s)", len(entries))) {
		t.Errorf("--per-directory: exit %d:\n%s%s", code, out, errOut)
	}
}

// TestHelmChartViaHelmTemplate is the documented way to check a chart: `helm template` piped
// in. The operator's chart with a preset on renders its RequestPriority and FlowSchema among
// other kinds, which are skipped; the chart directory itself is templates, not manifests.
func TestHelmChartViaHelmTemplate(t *testing.T) {
	chart := filepath.Join(envtestutil.RepoRoot(), "charts", "apf-operator")
	var rendered, stderr bytes.Buffer
	cmd := exec.Command(helmBinary(t), "template", "apf-operator", chart, "--set", "presets.coredns.enabled=true")
	cmd.Stdout, cmd.Stderr = &rendered, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	code, out, errOut := runDefault(t, rendered.String(), "--strict", "-f", "-")
	if code != ExitOK || out != "" || !strings.HasPrefix(errOut, "2 object(s) checked for --target native: 0 error(s), 0 warning(s); ") {
		t.Errorf("helm template | validate -f -: exit %d:\n%s%s", code, out, errOut)
	}
	if code, out, _ := runDefault(t, "", "-f", chart); code != ExitError || !strings.Contains(out, "not valid YAML") {
		t.Errorf("-f on the chart's directory: exit %d, want its templates reported:\n%s", code, out)
	}
}

// helmBinary is the pinned helm of bin/, or helm on PATH.
func helmBinary(t *testing.T) string {
	t.Helper()
	if bin, err := envtestutil.Tool("helm"); err == nil {
		return bin
	}
	bin, err := exec.LookPath("helm")
	if err != nil {
		t.Fatalf("no helm: neither bin/helm-<version> (make envtest) nor helm on PATH")
	}
	return bin
}
