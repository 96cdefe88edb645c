package main

import (
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/cli/explain"
	"github.com/apf-operator/apf-operator/internal/cli/replay"
	"github.com/apf-operator/apf-operator/internal/cli/top"
	"github.com/apf-operator/apf-operator/internal/cli/validate"
	"github.com/apf-operator/apf-operator/internal/version"
)

// pluginName is the name under which the binary serves as a kubectl plugin: kubectl runs
// `kubectl-apf` from PATH for `kubectl apf ...`, passing the arguments after `apf` unchanged.
const pluginName = "kubectl-apf"

// isKubectlPlugin reports whether the binary was invoked as the kubectl plugin (a symlink or
// copy named kubectl-apf, or kubectl-apf.exe on Windows).
func isKubectlPlugin(arg0 string) bool {
	return strings.TrimSuffix(filepath.Base(arg0), ".exe") == pluginName
}

// newPluginCommand is `kubectl apf`: the offline and read-only commands, with the same flags as
// under apf-operator. The operator itself is not a plugin command. Help shows "kubectl apf".
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
	root.AddCommand(
		validate.NewCommand(streams),
		explain.NewCommand(streams),
		replay.NewCommand(streams),
		top.NewCommand(streams),
		newVersionCommand(streams),
	)
	return root
}
