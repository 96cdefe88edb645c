package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
)

// runReplay runs the command with args and returns its stdout and error.
func runReplay(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	if errOut.Len() > 0 {
		t.Errorf("the command wrote to stderr itself (errors are the caller's to print): %q", errOut.String())
	}
	return out.String(), err
}

// wantExitFailure requires err to end the command with exit code 1 naming the count.
func wantExitFailure(t *testing.T, err error, n string) {
	t.Helper()
	var exit *cmdutil.ExitError
	if !errors.As(err, &exit) || exit.Code != cmdutil.ExitFailure || !strings.Contains(err.Error(), n+" object(s) of the manifests would not be projected") {
		t.Errorf("error %v; want exit code 1 naming %s object(s) not projected", err, n)
	}
}

func TestReportsProposedObjectsNotProjected(t *testing.T) {
	path, _ := readSynthetic(t, 500)
	args := []string{"--audit-log", path, "--current-dir", "testdata/current.yaml", "-f", "testdata/not-projected.yaml"}

	text, err := runReplay(t, args...)
	wantExitFailure(t, err, "1")
	const lines = "  not projected: proposed FlowSchema/cluster-info-reads (NotExpressible)\n" +
		`      spec.match[0].and[2].equals: Invalid value: "cluster-info": not expressible natively: native rules cannot test an`
	if !strings.Contains(text, lines) || !strings.Contains(text, "workload-low -> apf-gitops") {
		t.Errorf("text: want the lines %q and the report's moves:\n%s", lines, text)
	}
	for i, l := range strings.Split(text, "\n") {
		if len(l) > 120 {
			t.Errorf("text line %d has %d columns: %q", i+1, len(l), l)
		}
	}

	out, err := runReplay(t, append(args, "-o", "json")...)
	wantExitFailure(t, err, "1")
	var r Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	want := NotProjected{Configuration: "proposed", Kind: "FlowSchema", Name: "cluster-info-reads", Reason: "NotExpressible"}
	if len(r.NotProjected) != 1 || r.NotProjected[0].Message == "" {
		t.Fatalf("-o json notProjected %+v; want one entry %+v with a message", r.NotProjected, want)
	}
	got := r.NotProjected[0]
	got.Message = ""
	if got != want || !strings.Contains(r.NotProjected[0].Message, "native rules cannot test an object's name") {
		t.Errorf("-o json notProjected %+v; want %+v naming why", r.NotProjected[0], want)
	}

	gh, err := runReplay(t, append(args, "-o", "github")...)
	wantExitFailure(t, err, "1")
	if !strings.Contains(gh, "::warning title=APF replay::proposed FlowSchema cluster-info-reads would not be projected (NotExpressible)") ||
		!strings.Contains(gh, "; 1 object(s) of the manifests would not be projected") {
		t.Errorf("-o github: want a warning and the summary naming the object:\n%s", gh)
	}
}

func TestReportsCurrentObjectsNotProjected(t *testing.T) {
	path, _ := readSynthetic(t, 100)
	out, err := runReplay(t, "--audit-log", path, "--current-dir", "testdata/not-projected.yaml", "-f", "testdata/proposed.yaml", "-o", "json")
	wantExitFailure(t, err, "1")
	var r Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.NotProjected) != 1 || r.NotProjected[0].Configuration != "current" || r.NotProjected[0].Name != "cluster-info-reads" {
		t.Errorf("notProjected %+v; want the current configuration's cluster-info-reads", r.NotProjected)
	}
}

func TestEveryObjectProjectedExitsZero(t *testing.T) {
	path, _ := readSynthetic(t, 100)
	out, err := runReplay(t, "--audit-log", path, "--current-dir", "testdata/current.yaml", "-f", "testdata/proposed.yaml", "-o", "json")
	if err != nil {
		t.Fatalf("every object projected: %v", err)
	}
	if !strings.Contains(out, `"notProjected": []`) {
		t.Errorf("-o json: want an empty notProjected list:\n%s", out)
	}
}

func TestYAMLIsTheJSONReport(t *testing.T) {
	path, _ := readSynthetic(t, 100)
	args := []string{"--audit-log", path, "--current-dir", "testdata/current.yaml", "-f", "testdata/proposed.yaml"}
	out, err := runReplay(t, append(args, "-o", "yaml")...)
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML, fromJSON map[string]any
	if err := yaml.Unmarshal([]byte(out), &fromYAML); err != nil {
		t.Fatalf("-o yaml: %v\n%s", err, out)
	}
	js, err := runReplay(t, append(args, "-o", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(js), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromYAML, fromJSON) {
		t.Errorf("-o yaml and -o json differ:\n%s\n%s", out, js)
	}
	if _, ok := fromYAML["notProjected"]; !ok || fromYAML["requests"] != float64(100) {
		t.Errorf("-o yaml lacks notProjected or the 100 requests:\n%s", out)
	}
}
