package main

import (
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/cli/explain"
	"github.com/apf-operator/apf-operator/internal/cli/validate"
	versioncmd "github.com/apf-operator/apf-operator/internal/cli/version"
	"github.com/apf-operator/apf-operator/internal/version"
)

// pluginName is the name under which the binary serves as a kubectl plugin: kubectl runs
// `kubectl-apf` from PATH for `kubectl apf ...`, passing the arguments after `apf` unchanged.
const pluginName = "kubectl-apf"

// pluginCompletionName is the name under which the binary completes the plugin's command line:
// kubectl (1.26 and later) runs `kubectl_complete-apf ARGS...` from PATH when completing
// `kubectl apf ARGS...` and reads cobra's completion protocol (__complete) from it.
const pluginCompletionName = "kubectl_complete-apf"

// isKubectlPlugin reports whether the binary was invoked as the kubectl plugin (a symlink or
// copy named kubectl-apf, or kubectl-apf.exe on Windows).
func isKubectlPlugin(arg0 string) bool {
	return commandName(arg0) == pluginName
}

// isKubectlPluginCompletion reports whether kubectl invoked the binary to complete `kubectl apf`.
func isKubectlPluginCompletion(arg0 string) bool {
	return commandName(arg0) == pluginCompletionName
}

// commandName is arg0's file name without Windows' .exe.
func commandName(arg0 string) string {
	return strings.TrimSuffix(filepath.Base(arg0), ".exe")
}

// newPluginCommand is `kubectl apf`: the offline and read-only commands, with the same flags as
// under apf-operator. The operator itself is not a plugin command. Help shows "kubectl apf".
// It has no `completion` command: a script generated for "kubectl apf" would replace kubectl's
// own completion; kubectl completes plugins through kubectl_complete-apf instead.
func newPluginCommand(streams genericiooptions.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:     "kubectl apf",
		Short:   "API Priority and Fairness: validate, explain",
		Long:    "apf-operator as a kubectl plugin (the apf-operator binary installed on PATH as kubectl-apf).",
		Version: version.Get().String(),
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl apf",
		},
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		legacyCommand("validate", "Validate RequestPriority and FlowSchema manifests offline", validate.Run),
		legacyCommand("explain", "Show how a request would be classified", explain.Run),
		versioncmd.NewCommand(streams),
	)
	return root
}
