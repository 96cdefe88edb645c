package prune

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
)

func meta(name string, labelled bool, source string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name}
	if labelled {
		m.Labels = map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue}
	}
	if source != "" {
		m.Annotations = map[string]string{flowv1.AnnotationSource: source}
	}
	return m
}

func TestPruneDeletesOnlyOwnedObjects(t *testing.T) {
	s := runtime.NewScheme()
	if err := flowcontrolv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		&flowcontrolv1.FlowSchema{ObjectMeta: meta("apf-a", true, "FlowSchema/a")},
		&flowcontrolv1.FlowSchema{ObjectMeta: meta("apf-b", false, "")},
		&flowcontrolv1.FlowSchema{ObjectMeta: meta("labelled-only", true, "")},
		&flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: meta("apf-a", true, "RequestPriority/a")},
		&flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: meta("workload-low", false, "")},
	).Build()

	var out bytes.Buffer
	if err := Prune(context.Background(), c, DryRunClient, &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "would delete"); n != 2 {
		t.Fatalf("dry run listed %d objects, want 2:\n%s", n, out.String())
	}
	assertCount(t, c, 3, 2) // a dry run deletes nothing

	out.Reset()
	if err := Prune(context.Background(), c, DryRunServer, &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "(server dry run)"); n != 2 {
		t.Fatalf("server dry run listed %d objects, want 2:\n%s", n, out.String())
	}
	assertCount(t, c, 3, 2) // sent with dryRun=All: nothing deleted

	out.Reset()
	if err := Prune(context.Background(), c, DryRunNone, &out); err != nil {
		t.Fatal(err)
	}
	assertCount(t, c, 2, 1)
	for _, want := range []string{"deleted FlowSchema apf-a (from FlowSchema/a)", "deleted PriorityLevelConfiguration apf-a (from RequestPriority/a)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func assertCount(t *testing.T, c client.Client, wantFS, wantPLC int) {
	t.Helper()
	var fss flowcontrolv1.FlowSchemaList
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err := c.List(context.Background(), &fss); err != nil {
		t.Fatal(err)
	}
	if err := c.List(context.Background(), &plcs); err != nil {
		t.Fatal(err)
	}
	if len(fss.Items) != wantFS || len(plcs.Items) != wantPLC {
		t.Fatalf("%d FlowSchemas and %d levels left, want %d and %d", len(fss.Items), len(plcs.Items), wantFS, wantPLC)
	}
}

func TestRunUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run([]string{"--bogus"}, &out, &errOut); code != 2 {
		t.Fatalf("Run(--bogus) = %d, want 2", code)
	}
	if code := Run([]string{"--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "apf-operator prune-native [--dry-run=none|client|server]") {
		t.Fatalf("Run(--help) = %d, %q", code, out.String())
	}
	errOut.Reset()
	if code := Run([]string{"--dry-run=true"}, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), `invalid dry-run value (true). Must be "none", "server", or "client"`) {
		t.Fatalf("Run(--dry-run=true) = %d, %q", code, errOut.String())
	}
}

// TestRunConnectionFlags checks that kubectl's connection flags reach the kubeconfig loader: a
// context the kubeconfig lacks is an error naming it, exit code 1, before any request.
func TestRunConnectionFlags(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "+
		"\"https://127.0.0.1:1\"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: dev, context: {cluster: c, user: u}}]\n"+
		"current-context: dev\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Run([]string{"--kubeconfig", kubeconfig, "--context", "prod", "--dry-run=client"}, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), `context "prod" does not exist`) {
		t.Fatalf("--context prod: exit %d, stderr %q; want 1 and the missing context named", code, errOut.String())
	}
}

// TestDryRunCompletion: --dry-run completes kubectl's three strategies through cobra's
// __complete, which kubectl's plugin completion calls.
func TestDryRunCompletion(t *testing.T) {
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	root := &cobra.Command{Use: "apf-operator"}
	root.AddCommand(NewCommand(streams))
	code := cmdutil.Execute(root, []string{cobra.ShellCompRequestCmd, "prune-native", "--dry-run="}, streams)
	if want := "none\nclient\nserver\n:4\n"; code != 0 || !strings.HasSuffix(out.String(), want) {
		t.Errorf("__complete prune-native --dry-run=: exit %d, %q, want %q (%s)", code, out.String(), want, errOut.String())
	}
}
