package validate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
)

// complete runs cobra's completion protocol (what kubectl_complete-apf answers) for args.
func complete(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	root := &cobra.Command{Use: "apf-operator"}
	root.AddCommand(NewCommand(streams))
	if code := cmdutil.Execute(root, append([]string{cobra.ShellCompRequestCmd, "validate"}, args...), streams); code != ExitOK {
		t.Fatalf("__complete %v: exit %d: %s", args, code, errOut.String())
	}
	return out.String()
}

// TestCompletionGolden: every enum flag completes its values, and the flags themselves complete,
// as in testdata/golden/completion.txt.
func TestCompletionGolden(t *testing.T) {
	var b strings.Builder
	for _, args := range [][]string{{"-o", ""}, {"--target", ""}, {"--native-unmatched", ""}, {"--"}} {
		b.WriteString("$ validate " + strings.Join(args, " ") + "\n" + complete(t, args...))
	}
	golden(t, "golden/completion.txt", b.String())
}
