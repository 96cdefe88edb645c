package docs_test

import (
	"strings"
	"testing"
)

// expectation is the shape of a documented command's result: its exit code, and lines (or
// parts of lines) its standard output and standard error must hold. Shape, not every byte:
// the prose of messages may change, the streams and the key lines may not.
type expectation struct {
	code int
	// stdout and stderr must each contain these, in any order; an empty list says nothing,
	// except that noStdout requires standard output to be empty (messages only).
	stdout, stderr []string
	noStdout       bool
}

// check compares r with e.
func (e expectation) check(t *testing.T, command string, r result) {
	t.Helper()
	bad := r.code != e.code || (e.noStdout && r.stdout != "")
	for _, s := range e.stdout {
		bad = bad || !strings.Contains(r.stdout, s)
	}
	for _, s := range e.stderr {
		bad = bad || !strings.Contains(r.stderr, s)
	}
	if bad {
		t.Errorf("%s: exit %d; want exit %d, stdout with %q (empty: %v), stderr with %q\n--- stdout\n%s--- stderr\n%s",
			command, r.code, e.code, e.stdout, e.noStdout, e.stderr, r.stdout, r.stderr)
	}
}

// validated is validate's summary line on standard error for n objects of the default target.
func validated(n string) string {
	return n + " object(s) checked for --target native: 0 error(s), 0 warning(s)"
}

// importedAll ends import's summary when every FlowSchema refers to a level that exists;
// importedOrphan when one (native.yaml's orphan) does not.
const (
	importedAll    = "0 imported FlowSchema(s) refer to a level that exists nowhere known"
	importedOrphan = "1 imported FlowSchema(s) refer to a level that exists nowhere known"
)

// expectations are the shapes of the commands of the run=offline blocks, by command (its
// words joined by one space).
var expectations = map[string]expectation{
	// docs/cli.md
	// native.yaml's FlowSchema orphan refers to a level that exists nowhere known: exit 3.
	"apf-operator import -f native.yaml -o name": {code: 3, stdout: []string{"requestpriority.flowcontrol.apf-operator.io/",
		"flowschema.flowcontrol.apf-operator.io/orphan"}, stderr: []string{`FlowSchema "orphan"`, importedOrphan}},
	"apf-operator version": {stdout: []string{"apf-operator v", "(commit "}},
	"apf-operator version -o json # or -o yaml: gitVersion, gitCommit, buildDate, goVersion, platform": {stdout: []string{`"gitVersion": "v`, `"platform": "`}},
	"apf-operator import -f native.yaml > apf.yaml # files, directories or - (standard input)":         {code: 3, noStdout: true, stderr: []string{`FlowSchema "orphan"`, importedOrphan}},
	"apf-operator validate -f ./clusters/prod/apf/ # a directory, searched recursively":                {noStdout: true, stderr: []string{validated("4")}},
	"kustomize build overlays/prod | apf-operator validate -f - # a rendered stream on standard input": {noStdout: true, stderr: []string{validated("2")}},
	"apf-operator validate -o github --strict --per-directory -f ./clusters/ # a fleet: one set per cluster directory": {noStdout: true,
		stderr: []string{"8 object(s) checked for --target native in 2 set(s): 0 error(s), 0 warning(s)"}},
	"apf-operator validate -o json -f a.yaml -f b.yaml # for tools (-o yaml too)": {stdout: []string{`"findings": []`, `"errors": 0`},
		stderr: []string{validated("4")}},
	"helm template my-release charts/my-chart -f values.yaml | apf-operator validate -f - # a Helm chart, rendered": {noStdout: true,
		stderr: []string{" object(s) checked for --target native: 0 error(s), 0 warning(s)", "document(s) of other kinds skipped"}},
	"apf-operator explain -f ./clusters/prod/apf/ --as alice --verb create --resource pods -n team-a --in-process": {
		stdout: []string{"FlowSchema:", "Priority level:"}},
	// docs/import.md
	"apf-operator import -f openshift/ > apf.yaml # against the newest bootstrap set": {noStdout: true, stderr: []string{importedAll}},
	"apf-operator import -f karpenter-flowschemas.yaml --kubernetes-version 1.30": {stdout: []string{"kind: FlowSchema", "nativeLevel: "},
		stderr: []string{importedAll}},
	// docs/gitops.md
	"apf-operator validate -f ./clusters/prod/apf/": {noStdout: true, stderr: []string{validated("4")}},
	// docs/eventratelimit.md (its console block shows the findings)
	"apf-operator validate -f erl.yaml": {code: 1, stdout: []string{"erl.yaml:"}, stderr: []string{"1 object(s) checked for --target native: 2 error(s)"}},
	// docs/recommend.md (its console block shows the table)
	"apf-operator recommend --metrics-from from.metrics --metrics-to to.metrics --window 5m -f manifests": {
		stdout: []string{"REQUESTPRIORITY", "3 RequestPriorities to change"}},
	// docs/replay.md
	"apf-operator replay --audit-log audit.log --current-dir main/apf/ -f pr/apf/": {
		stdout: []string{"Replayed 4 requests", "MOVES (current level -> proposed level)", "workload-low -> apf-gitops"}},
}
