package cmdutil

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
)

// newRoot is a root command with one subcommand, as the binary builds them.
func newRoot() *cobra.Command {
	root := &cobra.Command{Use: "apf-operator", Version: "v1.2.3"}
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(&cobra.Command{Use: "validate", RunE: func(*cobra.Command, []string) error { return nil }})
	AddGlobalFlags(root)
	return root
}

// TestVerbosityAndVersionAsKubectl: -v sets klog's verbosity on a subcommand, --version is long
// only, and -v is not --version.
func TestVerbosityAndVersionAsKubectl(t *testing.T) {
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	if code := Execute(newRoot(), []string{"validate", "-v=4"}, streams); code != ExitOK || !klog.V(4).Enabled() || klog.V(5).Enabled() {
		t.Errorf("validate -v=4: exit %d, klog V(4) %v, V(5) %v: %s", code, klog.V(4).Enabled(), klog.V(5).Enabled(), errOut.String())
	}
	out.Reset()
	if code := Execute(newRoot(), []string{"--version"}, streams); code != ExitOK || out.String() != "v1.2.3\n" {
		t.Errorf("--version: exit %d, %q", code, out.String())
	}
	root := newRoot()
	if f := root.Flags().Lookup("version"); f == nil || f.Shorthand != "" {
		t.Errorf("--version flag %+v, want no shorthand", f)
	}
	if f := root.PersistentFlags().Lookup("v"); f == nil || f.Shorthand != "v" {
		t.Errorf("-v flag %+v, want the verbosity", f)
	}
}
