// Command apf-operator manages API Priority and Fairness configuration: it keeps a safe default
// configuration present, validates RequestPriority and FlowSchema objects at admission, projects
// them onto kube-apiserver's own flow control, which enforces them, and reports whether each
// object is in effect and projected. Run without arguments it prints its commands; the operator
// itself is `apf-operator manager`.
//
// Installed on PATH as kubectl-apf (a symlink or copy), the binary is a kubectl plugin serving
// the offline and read-only commands as `kubectl apf COMMAND`; installed as kubectl_complete-apf
// too, it completes them in kubectl's shell completion.
package main

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(dispatch(os.Args[0], os.Args[1:], streams))
}

// dispatch runs the binary as the kubectl plugin when it was invoked as kubectl-apf, as its
// completion when invoked as kubectl_complete-apf, and as apf-operator otherwise, and returns
// the exit code.
func dispatch(arg0 string, args []string, streams genericiooptions.IOStreams) int {
	switch {
	case isKubectlPlugin(arg0):
		return cmdutil.Execute(newPluginCommand(streams), args, streams)
	case isKubectlPluginCompletion(arg0):
		return cmdutil.Execute(newPluginCommand(streams), append([]string{cobra.ShellCompRequestCmd}, args...), streams)
	}
	return cmdutil.Execute(newRootCommand(streams), args, streams)
}
