package importer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// run calls Run and returns its exit code and outputs.
func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// plc is a native Limited level with queues; extra goes into its metadata.
func plc(name, extra string) string {
	return fmt.Sprintf("---\napiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: PriorityLevelConfiguration\n"+
		"metadata: {name: %s%s}\nspec: {type: Limited, limited: {nominalConcurrencyShares: 10, limitResponse: "+
		"{type: Queue, queuing: {queues: 16, handSize: 4, queueLengthLimit: 10}}}}\n", name, extra)
}

// fs is a native FlowSchema that matches every non-resource request; extra goes into its
// metadata.
func fs(name string, precedence int, level, extra string) string {
	return fmt.Sprintf("---\napiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata: {name: %s%s}\n"+
		"spec: {matchingPrecedence: %d, priorityLevelConfiguration: {name: %s}, rules: [{subjects: [{kind: Group, "+
		"group: {name: \"*\"}}], nonResourceRules: [{verbs: [\"*\"], nonResourceURLs: [\"*\"]}]}]}\n",
		name, extra, precedence, level)
}

const (
	suggested = ", annotations: {apf.kubernetes.io/autoupdate-spec: \"true\"}"
	owned     = ", labels: {app.kubernetes.io/managed-by: apf-operator}, " +
		"annotations: {flowcontrol.apf-operator.io/source: RequestPriority/tenants}"
)

// TestGolden runs the command on a `kubectl get -o yaml` List and compares the output.
func TestGolden(t *testing.T) {
	dir := filepath.Join("testdata", "golden")
	code, out, errOut := run(t, "", "-f", filepath.Join(dir, "input.yaml"))
	want, err := os.ReadFile(filepath.Join(dir, "output.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if code != ExitOK || out != string(want) {
		t.Fatalf("exit %d, output:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
	}
	for _, line := range []string{
		`note: FlowSchema "operators": its non-resource rules are imported as FlowSchema "operators-nonresource"`,
		`skipped FlowSchema "probes": kube-apiserver's suggested object; pass --include-bootstrap to import it`,
		`skipped PriorityLevelConfiguration "exempt": kube-apiserver's mandatory object`,
		"imported 2 RequestPriority (0 bound to existing levels) and 3 FlowSchema objects; not enforced: 0 native object(s) could not be imported exactly",
	} {
		if !strings.Contains(errOut, line) {
			t.Errorf("stderr lacks %q:\n%s", line, errOut)
		}
	}
}

func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "nothing to import: pass -f PATH"},
		{[]string{"-f", "x.yaml", "--from-cluster"}, "give either -f PATH or --from-cluster, not both"},
		{[]string{"x.yaml", "--kubeconfig", "k"}, "--kubeconfig needs --from-cluster"},
		{[]string{"--bogus"}, "unknown flag: --bogus\nSee 'apf-operator import --help' for usage"},
		{[]string{"x.yaml", "--context", "prod"}, "--context needs --from-cluster"},
		{[]string{"-f", "x.yaml", "-o", "table"}, `unable to match a printer suitable for the output format "table"`},
	} {
		if code, out, errOut := run(t, "", c.args...); code != ExitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("Run(%q) = %d, %q; want %d and %q", c.args, code, errOut, ExitUsage, c.want)
		}
	}
	code, out, errOut := run(t, "", "--help")
	if code != ExitOK || errOut != "" || !strings.Contains(out, "apf-operator import (-f PATH") || !strings.Contains(out, "--include-bootstrap") {
		t.Errorf("--help: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestReadErrors checks that every input error names the file and document, and that nothing
// is printed then.
func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, content, want string }{
		{"bad.yaml", plc("a", "") + "---\nkind: [\n", "bad.yaml:1: not valid YAML"},
		{"unknown.yaml", plc("a", "") + strings.Replace(plc("b", ""), "queueLengthLimit", "queueLenghtLimit", 1),
			`unknown.yaml:1: PriorityLevelConfiguration: unknown field "spec.limited.limitResponse.queuing.queueLenghtLimit"`},
		{"dupkey.yaml", "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nkind: FlowSchema\nmetadata: {name: x}\n",
			`dupkey.yaml:0: not valid YAML`},
		{"version.yaml", strings.Replace(plc("a", ""), "/v1\n", "/v1alpha1\n", 1),
			`version.yaml:0: apiVersion: unsupported version "flowcontrol.apiserver.k8s.io/v1alpha1"`},
		{"beta.yaml", strings.Replace(plc("a", ""), "/v1\n", "/v1beta2\n", 1), // v1beta2 calls it assuredConcurrencyShares
			`beta.yaml:0: PriorityLevelConfiguration: unknown field "spec.limited.nominalConcurrencyShares"`},
		{"kind.yaml", "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: Flow\nmetadata: {name: x}\n",
			`kind.yaml:0: kind: unsupported kind "Flow"`},
		{"dup.yaml", plc("a", "") + plc("a", ""), `dup.yaml:1: metadata.name: Duplicate value: PriorityLevelConfiguration "a" is also defined at`},
		{"noname.yaml", fs("", 100, "a", ""), `noname.yaml:0: metadata.name: Required value`},
	} {
		path := writeFile(t, dir, c.name, c.content)
		code, out, errOut := run(t, "", "-f", path)
		if code != ExitError || out != "" || !strings.Contains(errOut, filepath.Join(dir, c.want)) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d and %q", c.name, code, out, errOut, ExitError, c.want)
		}
	}
	if code, _, errOut := run(t, "", "-f", filepath.Join(dir, "missing.yaml")); code != ExitError || !strings.Contains(errOut, "cannot read") {
		t.Errorf("missing file: exit %d, %q", code, errOut)
	}
}

// TestSkipRules checks which objects are imported with and without --include-bootstrap.
func TestSkipRules(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "mandatory.yaml", plc("catch-all", suggested)+fs("exempt", 1, "exempt", suggested)+fs("catch-all", 10000, "catch-all", suggested))
	writeFile(t, dir, "suggested.yaml", plc("workload-low", suggested)+fs("global-default", 9900, "workload-low", suggested)+
		fs("service-accounts", 9000, "global-default", suggested)+plc("global-default", suggested))
	writeFile(t, dir, "operator/owned.yaml", plc("apf-tenants", owned)+fs("apf-tenants", 1000, "apf-tenants", owned))
	writeFile(t, dir, "user.yaml", plc("mine", "")+fs("mine", 100, "mine", "")+
		fs("system-nodes", 200, "mine", "")) // a suggested name without the annotation is the user's
	writeFile(t, dir, "other/notes.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b, a: c}\n")

	code, out, errOut := run(t, "", "-f", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	wantNames(t, out, "mine", "mine", "system-nodes")
	for _, line := range []string{
		`skipped PriorityLevelConfiguration "catch-all": kube-apiserver's mandatory object`,
		`skipped FlowSchema "exempt": kube-apiserver's mandatory object`,
		`skipped FlowSchema "global-default": kube-apiserver's suggested object; pass --include-bootstrap`,
		`skipped PriorityLevelConfiguration "apf-tenants": projected by the operator`,
		`skipped FlowSchema "apf-tenants": projected by the operator`,
	} {
		if !strings.Contains(errOut, line) {
			t.Errorf("stderr lacks %q:\n%s", line, errOut)
		}
	}

	code, out, errOut = run(t, "", "-f", dir, "--include-bootstrap")
	if code != ExitOK {
		t.Fatalf("--include-bootstrap: exit %d: %s", code, errOut)
	}
	wantNames(t, out, "mine", "global-default", "workload-low", "mine", "system-nodes", "service-accounts", "global-default")
	if !strings.Contains(out, "  name: mine\nspec:\n  assuredConcurrencyShares: 10\n  handSize: 4\n  lendablePercent: 0\n  priorityLevel: 1000\n") ||
		!strings.Contains(out, "  nativeLevel: global-default\n  priorityLevel: 2000\n") {
		t.Errorf("levels are not in the order of the schemas' first match (mine, global-default, workload-low):\n%s", out)
	}
}

// wantNames checks the metadata.name of every printed object, in order.
func wantNames(t *testing.T, out string, names ...string) {
	t.Helper()
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(line, "  name: "); ok {
			got = append(got, name)
		}
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("printed %v, want %v:\n%s", got, names, out)
	}
}

// TestReferences checks a reference to a suggested level that is not imported (bound to it),
// to the operator's level, to a level of the bootstrap set that the inputs lack (bound) and to
// a missing level (imported, not enforced: exit code 3).
func TestReferences(t *testing.T) {
	in := plc("workload-low", suggested) + plc("apf-tenants", owned) +
		fs("a", 100, "workload-low", "") + fs("b", 200, "apf-tenants", "") + fs("c", 300, "missing", "") +
		fs("d", 400, "leader-election", "")
	code, out, errOut := run(t, in, "-f", "-")
	if code != ExitUnenforced {
		t.Fatalf("exit %d, want %d: %s", code, ExitUnenforced, errOut)
	}
	wantNames(t, out, "workload-low", "leader-election", "a", "b", "c", "d")
	for _, want := range []string{
		`note: FlowSchema "b": refers to the operator's PriorityLevelConfiguration "apf-tenants", so it refers to RequestPriority "tenants"`,
		`warning: FlowSchema "c": its PriorityLevelConfiguration "missing" is neither among the inputs nor in kube-apiserver ` +
			bootstrapset.Newest() + `'s bootstrap set`,
		"imported 2 RequestPriority (2 bound to existing levels) and 4 FlowSchema objects; not enforced: 0 native object(s) " +
			"could not be imported exactly and are left out, 1 imported FlowSchema(s) refer to a level that exists nowhere known",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	for _, want := range []string{"  requestPriority:\n    name: tenants\n", "  requestPriority:\n    name: missing\n",
		"# from a reference to PriorityLevelConfiguration workload-low, bound to that level of the inputs (kube-apiserver's suggested level)\n",
		"  nativeLevel: workload-low\n", "  nativeLevel: leader-election\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestNotImportable checks levels and schemas that cannot be imported exactly: reported as
// warnings, left out, the rest printed, exit code 1.
func TestNotImportable(t *testing.T) {
	reject := "---\napiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: PriorityLevelConfiguration\nmetadata: {name: strict}\n" +
		"spec: {type: Limited, limited: {nominalConcurrencyShares: 10, limitResponse: {type: Reject}}}\n"
	wide := strings.Replace(plc("wide", ""), "queues: 16", "queues: 5000", 1)
	in := reject + wide + plc("ok", "") + fs("to-strict", 100, "strict", "") + fs("to-wide", 200, "wide", "") +
		fs("to-catch-all", 300, "catch-all", "") + strings.Replace(reject, "name: strict", "name: catch-all", 1) +
		fs("fine", 400, "ok", "") +
		fs("split", 500, "ok", "") + fs("split-a", 500, "ok", "")
	in = strings.Replace(in, "name: split}\nspec: {", "name: split}\nspec: {distinguisherMethod: {type: ByNamespace}, ", 1)
	in = strings.Replace(in, "name: split}\nspec: {distinguisherMethod: {type: ByNamespace}, matchingPrecedence: 500, "+
		"priorityLevelConfiguration: {name: ok}, rules: [{", "name: split}\nspec: {distinguisherMethod: {type: ByNamespace}, "+
		"matchingPrecedence: 500, priorityLevelConfiguration: {name: ok}, rules: [{resourceRules: [{verbs: [get], "+
		"apiGroups: [\"\"], resources: [pods], namespaces: [\"*\"]}], ", 1)
	code, out, errOut := run(t, in, "-f", "-")
	if code != ExitError {
		t.Fatalf("exit %d, want %d: %s", code, ExitError, errOut)
	}
	wantNames(t, out, "catch-all", "ok", "to-catch-all", "fine", "split-a") // catch-all: bound, it rejects natively
	for _, want := range []string{
		`warning: PriorityLevelConfiguration "strict": not imported: spec.limited.limitResponse.type: Reject: a RequestPriority always queues`,
		`warning: PriorityLevelConfiguration "wide": not imported: the RequestPriority it would become is invalid (spec.queuesPerWidth: Invalid value: 5000`,
		`warning: FlowSchema "to-strict": not imported: its PriorityLevelConfiguration "strict" is not imported (see above)`,
		`warning: FlowSchema "to-wide": not imported: its PriorityLevelConfiguration "wide" is not imported`,
		`warning: FlowSchema "split": not imported: its non-resource rules would go to FlowSchema "split-nonresource" ` +
			`(a namespace distinguisher needs resource requests), and FlowSchema "split-a", of the same matchingPrecedence, would then match between the two`,
		"imported 2 RequestPriority (1 bound to existing levels) and 3 FlowSchema objects; not enforced: 5 native object(s) could not be imported exactly",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestTooManyConjunctions checks that an import that breaks a FlowSchema limit is reported.
func TestTooManyConjunctions(t *testing.T) {
	var urls []string
	for i := range 65 {
		urls = append(urls, fmt.Sprintf("/p%d", i))
	}
	in := plc("ok", "") + strings.Replace(fs("many", 100, "ok", ""), `nonResourceURLs: ["*"]`,
		"nonResourceURLs: ["+strings.Join(urls, ", ")+"]", 1)
	code, out, errOut := run(t, in, "-f", "-")
	if code != ExitError || !strings.Contains(errOut, `warning: FlowSchema "many": not imported: the FlowSchema "many" it would become `+
		`is invalid (spec.match: Too many: 65: must have at most 64 items); split the native FlowSchema`) {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	wantNames(t, out, "ok")
}

// TestV1beta3 checks v1beta3's nominalConcurrencyShares 0 (30 unless preserved) and a List
// of the version.
func TestV1beta3(t *testing.T) {
	level := func(name, extra string) string {
		return strings.NewReplacer("flowcontrol.apiserver.k8s.io/v1\n", "flowcontrol.apiserver.k8s.io/v1beta3\n",
			"nominalConcurrencyShares: 10", "nominalConcurrencyShares: 0").Replace(plc(name, extra))
	}
	in := level("default-shares", "") + level("zero-shares", ", annotations: "+
		"{flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares: \"\"}")
	code, out, errOut := run(t, in, "-f", "-")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "name: default-shares\nspec:\n  assuredConcurrencyShares: 30\n") ||
		!strings.Contains(out, "name: zero-shares\nspec:\n  assuredConcurrencyShares: 0\n") {
		t.Errorf("shares not read as v1beta3 means them:\n%s", out)
	}
}

// TestConnectionFlags checks that kubectl's connection flags reach the kubeconfig loader: a
// context the kubeconfig lacks is an error naming it, before any request.
func TestConnectionFlags(t *testing.T) {
	kubeconfig := writeFile(t, t.TempDir(), "kubeconfig", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "+
		"\"https://127.0.0.1:1\"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: dev, context: {cluster: c, user: u}}]\n"+
		"current-context: dev\n")
	code, out, errOut := run(t, "", "--from-cluster", "--kubeconfig", kubeconfig, "--context", "prod")
	if code != ExitError || out != "" || !strings.Contains(errOut, `context "prod" does not exist`) {
		t.Fatalf("--context prod: exit %d, stdout %q, stderr %q; want %d and the missing context named", code, out, errOut, ExitError)
	}
}
