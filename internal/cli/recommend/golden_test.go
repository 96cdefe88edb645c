package recommend

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
)

// update rewrites the golden files from the current output: go test ./internal/cli/recommend -run TestGolden -update
var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden from the current output")

// saved are the arguments of a recommendation from the saved metrics of testdata.
var saved = []string{"--metrics-from", "testdata/from.metrics", "--metrics-to", "testdata/to.metrics", "--window", "5m"}

func savedArgs(more ...string) []string { return append(append([]string{}, saved...), more...) }

// run runs recommend with args and renders its exit code and outputs.
func run(args ...string) (string, int) {
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code := cmdutil.Execute(NewCommand(streams), args, streams)
	return fmt.Sprintf("$ recommend %s\nexit code: %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), code, out.String(), errOut.String()), code
}

// TestGolden compares each command line's output with testdata/golden/<name>.golden.
func TestGolden(t *testing.T) {
	cases := map[string][]string{
		"table":          savedArgs("-f", "testdata/manifests"),
		"yaml":           savedArgs("-f", "testdata/manifests", "-o", "yaml"),
		"github":         savedArgs("-f", "testdata/manifests", "-o", "github"),
		"exit-code":      savedArgs("-f", "testdata/manifests", "-o", "yaml", "--exit-code"),
		"hold-yaml":      savedArgs("-f", "testdata/hold.yaml", "-o", "yaml", "--exit-code"),
		"hold-table":     savedArgs("-f", "testdata/hold.yaml"),
		"two-replicas":   {"--metrics-from", "testdata/from.metrics,testdata/from.metrics", "--metrics-to", "testdata/to.metrics", "--metrics-to", "testdata/to.metrics", "--window", "5m", "-f", "testdata/manifests"},
		"no-demand":      {"--metrics-from", "testdata/from.metrics", "--metrics-to", "testdata/nodemand.metrics", "--window", "5m", "-f", "testdata/manifests"},
		"short-window":   savedArgs("-f", "testdata/manifests", "--window", "14s"),
		"json":           savedArgs("-f", "testdata/manifests", "-o", "json"),
		"hold-json":      savedArgs("-f", "testdata/hold.yaml", "-o", "json", "--exit-code"),
		"bad-output":     savedArgs("-f", "testdata/manifests", "-o", "wide"),
		"missing-window": {"--metrics-from", "testdata/from.metrics", "--metrics-to", "testdata/to.metrics", "-f", "testdata/manifests"},
		"missing-to":     {"--metrics-from", "testdata/from.metrics", "--window", "5m", "-f", "testdata/manifests"},
		"missing-f":      {"--metrics-from", "testdata/from.metrics", "--metrics-to", "testdata/to.metrics", "--window", "5m"},
		"missing-file":   {"--metrics-from", "testdata/absent.metrics", "--metrics-to", "testdata/to.metrics", "--window", "5m", "-f", "testdata/manifests"},
		"not-metrics":    {"--metrics-from", "testdata/hold.yaml", "--metrics-to", "testdata/to.metrics", "--window", "5m", "-f", "testdata/manifests"},
		"tiny-window":    savedArgs("-f", "testdata/manifests", "--window", "10ms"),
		"empty-pool":     savedArgs("-f", "testdata/manifests/others.yaml"),
		"empty-pool-md":  savedArgs("-f", "testdata/manifests/others.yaml", "-o", "github"),
		"no-rp":          savedArgs("-f", "testdata/from.metrics"),
		"counter-reset":  {"--metrics-from", "testdata/to.metrics", "--metrics-to", "testdata/from.metrics", "--window", "5m", "-f", "testdata/manifests"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			got, _ := run(args...)
			compareGolden(t, filepath.Join("testdata", "golden", name+".golden"), got)
		})
	}
}

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
		t.Fatalf("%v (go test ./internal/cli/recommend -run TestGolden -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (-update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
