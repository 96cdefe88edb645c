package explain

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDeprecationNoticesGoToStderr: a deprecated spelling still works, its notice goes to
// standard error, and -o json on standard output stays one JSON document.
func TestDeprecationNoticesGoToStderr(t *testing.T) {
	code, out, errOut := run(t, "-f", samples(), "--user", "u", "--groups", "tenants", "--verb", "list",
		"--resource", "pods", "-n", "t-1", "-o", "json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil {
		t.Fatalf("exit %d, stdout is not JSON (%v):\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	want := "Flag --groups has been deprecated, use --as-group\nFlag --user has been deprecated, use --as\n"
	if errOut != want {
		t.Errorf("stderr = %q, want %q", errOut, want)
	}
}

// TestPathMustStartWithSlash: --path healthz is a usage error that shows the fix.
func TestPathMustStartWithSlash(t *testing.T) {
	code, out, errOut := run(t, "-f", samples(), "--as", "alice", "--path", "healthz")
	if code != 2 || out != "" || !strings.Contains(errOut, `--path "healthz": a URL path starts with /, e.g. --path /healthz`) {
		t.Errorf("exit %d:\n%s%s", code, out, errOut)
	}
}

// TestCompletion: -o, --verb and --native-unmatched complete their values, as kubectl's plugin
// completion (kubectl_complete-apf) asks through cobra's __complete.
func TestCompletion(t *testing.T) {
	for flag, want := range map[string]string{
		"-o":                 "text\njson\nyaml\n:4\n",
		"--verb":             "get\nlist\nwatch\ncreate\nupdate\npatch\ndelete\ndeletecollection\nproxy\nhead\npost\nput\noptions\n:4\n",
		"--native-unmatched": "kube-apiserver\noperator\n:4\n",
	} {
		code, out, errOut := run(t, "__complete", flag, "")
		if code != 0 || !strings.HasSuffix(out, want) {
			t.Errorf("__complete %s: exit %d, %q, want %q (%s)", flag, code, out, want, errOut)
		}
	}
}

// TestShortNameHintOffline: offline, --resource deploy is answered literally with a hint on
// standard error that names the resource it stands for.
func TestShortNameHintOffline(t *testing.T) {
	code, _, errOut := run(t, "-f", samples(), "--as", "alice", "--verb", "get", "--resource", "deploy", "-n", "t-1")
	if code != 0 || !strings.Contains(errOut, `--resource "deploy" looks like a short name`) ||
		!strings.Contains(errOut, "did you mean --resource deployments.apps?") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if _, _, errOut := run(t, "-f", samples(), "--as", "alice", "--verb", "get", "--resource", "pods", "-n", "t-1"); errOut != "" {
		t.Errorf("pods: stderr %q, want none", errOut)
	}
}

// TestLongRunningSaidOnce: for pods/log, which kube-apiserver serves unclassified, no line
// claims that a schema classifies the request or that it is exempt.
func TestLongRunningSaidOnce(t *testing.T) {
	for _, as := range [][]string{{"--as", "alice"}, {"--as", "root", "--as-group", "system:masters"}} {
		args := append([]string{"-f", samples(), "--verb", "get", "--resource", "pods/log", "-n", "t-1"}, as...)
		code, out, errOut := run(t, args...)
		if code != 0 || !strings.Contains(out, "serves it unclassified") || strings.Contains(out, "classify the request") ||
			strings.Contains(out, "always exempt") || !strings.Contains(out, "Operator:") {
			t.Errorf("%v: exit %d:\n%s%s", as, code, out, errOut)
		}
	}
}
