package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/version"
)

// update rewrites the golden files from the current output: go test -run TestGolden . -update
var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// fakeBuild is the build the golden files show, whatever toolchain and commit run the tests.
var fakeBuild = version.Info{GitVersion: "v1.2.3", GitCommit: "0123456789abcdef0123456789abcdef01234567",
	BuildDate: "2026-01-02T03:04:05Z", GoVersion: "go1.99.0", Platform: "linux/amd64"}

// importInput is native objects whose import has notes and skipped objects on standard error.
var importInput = filepath.Join("internal", "cli", "importer", "testdata", "golden", "input.yaml")

// goldenCase is one command line whose exit code, standard output and standard error are
// compared with testdata/<name>.golden.
type goldenCase struct {
	name string
	arg0 string // apf-operator or kubectl-apf
	args []string
}

func goldenCases() []goldenCase {
	op := func(name string, args ...string) goldenCase { return goldenCase{name, "apf-operator", args} }
	plugin := func(name string, args ...string) goldenCase { return goldenCase{name, pluginName, args} }
	imp := func(name string, output ...string) goldenCase {
		return op("import-"+name, append([]string{"import", "-f", importInput}, output...)...)
	}
	return []goldenCase{
		op("root-bare"), op("root-help", "--help"), op("unknown-command", "frobnicate"), op("unknown-flag", "import", "--bogus"),
		op("manager-help", "manager", "--help"), op("manager-bad-flag", "manager", "--enforcement", "kernel"),
		op("import-help", "import", "--help"), op("prune-native-help", "prune-native", "--help"),
		op("recommend-help", "recommend", "--help"), plugin("plugin-recommend-help", "recommend", "--help"),
		op("version", "version"), op("version-flag", "--version"), op("version-json", "version", "-o", "json"),
		op("version-yaml", "version", "-o", "yaml"), op("version-bad-output", "version", "-o", "xml"),
		op("completion-complete", "__complete", ""), op("completion-complete-import-flags", "__complete", "import", "--f"),
		op("completion-complete-import-output", "__complete", "import", "-o", ""),
		op("completion-complete-version-output", "__complete", "version", "-o", ""),
		op("completion-complete-recommend-output", "__complete", "recommend", "-o", ""),
		op("completion-complete-replay-output", "__complete", "replay", "-o", ""),
		op("completion-complete-replay-native-unmatched", "__complete", "replay", "--native-unmatched", ""),
		imp("default"), imp("yaml", "-o", "yaml"), imp("json", "-o", "json"), imp("kyaml", "-o", "kyaml"),
		imp("name", "-o", "name"), imp("jsonpath", "-o", "jsonpath={range .items[*]}{.kind}/{.metadata.name}{\"\\n\"}{end}"),
		imp("jsonpath-as-json", "-o", "jsonpath-as-json={.items[*].metadata.name}"),
		imp("go-template", "-o", "go-template={{range .items}}{{.metadata.name}} {{end}}"),
		imp("bad-output", "-o", "wide"),
		plugin("plugin-bare"), plugin("plugin-help", "--help"), plugin("plugin-version", "version"),
		plugin("plugin-version-help", "version", "--help"), plugin("plugin-complete", "__complete", ""),
		{"plugin-kubectl-complete", pluginCompletionName, []string{"v"}},
	}
}

// TestGolden runs each command line and compares what it prints with its golden file.
func TestGolden(t *testing.T) {
	defer version.Override(fakeBuild)()
	t.Setenv("POD_NAMESPACE", "") // the manager's --namespace default
	t.Setenv("SERVICE_ACCOUNT_NAME", "")
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			compareGolden(t, filepath.Join("testdata", c.name+".golden"), runCaptured(c.arg0, c.args))
		})
	}
}

// runCaptured runs one command line and renders its exit code and outputs.
func runCaptured(arg0 string, args []string) string {
	var out, errOut bytes.Buffer
	code := dispatch(arg0, args, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return fmt.Sprintf("$ %s %s\nexit code: %d\n--- stdout\n%s--- stderr\n%s", arg0, strings.Join(args, " "), code, out.String(), errOut.String())
}

// compareGolden fails when got differs from the file (or rewrites the file with -update).
func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden . -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -run TestGolden . -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestCompletionScripts checks cobra's completion scripts: non-empty, for apf-operator, and
// completing through the binary's __complete (which TestGolden checks).
func TestCompletionScripts(t *testing.T) {
	defer version.Override(fakeBuild)()
	for shell, want := range map[string]string{
		"bash": "complete -o default -F __start_apf-operator apf-operator",
		"zsh":  "compdef _apf-operator apf-operator",
		"fish": "complete -c apf-operator ",
	} {
		var out, errOut bytes.Buffer
		code := dispatch("apf-operator", []string{"completion", shell}, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		if code != 0 || errOut.Len() != 0 || !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "__complete") {
			t.Errorf("completion %s: exit %d, stderr %q, script lacks %q or __complete:\n%.400s", shell, code, errOut.String(), want, out.String())
		}
	}
	if got := runCaptured(pluginName, []string{"completion", "bash"}); !strings.Contains(got, "exit code: 2") {
		t.Errorf("kubectl apf completion: a script for kubectl would replace kubectl's own completion; want an unknown command:\n%s", got)
	}
}

// TestPluginHelpSaysKubectlApf checks that every plugin command parsed by cobra names itself
// "kubectl apf ..." in its help. Commands still parsing their own flags (DisableFlagParsing)
// print their own usage and are checked by their packages.
func TestPluginHelpSaysKubectlApf(t *testing.T) {
	checked := 0
	for _, cmd := range newPluginCommand(genericiooptions.IOStreams{}).Commands() {
		if cmd.DisableFlagParsing || cmd.Name() == "help" {
			continue
		}
		got := runCaptured(pluginName, []string{cmd.Name(), "--help"})
		if !strings.Contains(got, "kubectl apf "+cmd.Name()) || strings.Contains(got, "apf-operator "+cmd.Name()) {
			t.Errorf("kubectl apf %s --help does not say kubectl apf:\n%s", cmd.Name(), got)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no plugin command checked")
	}
}
