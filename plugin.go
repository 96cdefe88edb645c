package main

import (
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	"github.com/apf-operator/apf-operator/internal/cli/explain"
	"github.com/apf-operator/apf-operator/internal/cli/recommend"
	"github.com/apf-operator/apf-operator/internal/cli/replay"
	"github.com/apf-operator/apf-operator/internal/cli/top"
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
		Short:   "API Priority and Fairness: validate, explain, top, replay",
		Long:    "apf-operator as a kubectl plugin (the apf-operator binary installed on PATH as kubectl-apf).",
		Version: version.Get().String(),
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl apf",
		},
	}
	root.SetVersionTemplate("{{.Version}}\n")
	cmdutil.AddGlobalFlags(root)
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		validate.NewCommand(streams),
		explain.NewCommand(streams),
		top.NewCommand(streams),
		recommend.NewCommand(streams),
		replay.NewCommand(streams),
		versioncmd.NewCommand(streams),
	)
	spellForPlugin(root, root.Commands())
	return root
}

// spellForPlugin rewrites "apf-operator CMD" as "kubectl apf CMD" in the help texts and
// examples of cmd and its subcommands, for every CMD the plugin serves (a command it does not
// serve, such as import, keeps its apf-operator spelling).
func spellForPlugin(cmd *cobra.Command, served []*cobra.Command) {
	for _, c := range served {
		from, to := "apf-operator "+c.Name(), "kubectl apf "+c.Name()
		cmd.Long = strings.ReplaceAll(cmd.Long, from, to)
		cmd.Example = strings.ReplaceAll(cmd.Example, from, to)
	}
	for _, sub := range cmd.Commands() {
		spellForPlugin(sub, served)
	}
}
