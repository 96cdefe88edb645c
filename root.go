package main

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	"github.com/apf-operator/apf-operator/internal/cli/explain"
	"github.com/apf-operator/apf-operator/internal/cli/importer"
	"github.com/apf-operator/apf-operator/internal/cli/prune"
	"github.com/apf-operator/apf-operator/internal/cli/replay"
	"github.com/apf-operator/apf-operator/internal/cli/top"
	"github.com/apf-operator/apf-operator/internal/cli/validate"
	"github.com/apf-operator/apf-operator/internal/version"
)

// newRootCommand is `apf-operator`: bare, it prints its commands.
func newRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "apf-operator",
		Short: "Manage API Priority and Fairness configuration",
		Long: `apf-operator keeps a safe API Priority and Fairness configuration present, validates
RequestPriority and FlowSchema objects at admission, and projects them onto kube-apiserver's
own flow control. 'apf-operator manager' runs the operator; the other commands work on
manifests and on a cluster.`,
		Version: version.Get().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(
		newManagerCommand(streams),
		validate.NewCommand(streams),
		explain.NewCommand(streams),
		legacyCommand("import", "Convert kube-apiserver's native flow control objects into manifests", importer.Run),
		legacyCommand("prune-native", "Delete the native flow control objects the operator projected (helm uninstall runs it)",
			func(args []string, _ io.Reader, stdout, stderr io.Writer) int { return prune.Run(args, stdout, stderr) }),
		replay.NewCommand(streams),
		top.NewCommand(streams),
		newVersionCommand(streams),
	)
	return root
}

// newManagerCommand is `apf-operator manager`: the operator. Its flags are parsed by
// parseManagerFlags, which controller-runtime's zap options bind to.
func newManagerCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:                "manager [flags]",
		Short:              "Run the operator (the chart's Deployment runs this)",
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return exitCode(runManager(args, streams.ErrOut))
		},
	}
}

// legacyCommand wraps a command that still parses its own flags.
func legacyCommand(name, short string, run func(args []string, stdin io.Reader, stdout, stderr io.Writer) int) *cobra.Command {
	return &cobra.Command{
		Use:                name + " [flags]",
		Short:              short,
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			return exitCode(run(args, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr()))
		},
	}
}

// exitCode turns a code whose message was already printed into the error Execute expects.
func exitCode(code int) error {
	if code == 0 {
		return nil
	}
	return &cmdutil.ExitError{Code: code}
}

// newVersionCommand is `apf-operator version`.
func newVersionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Show the build's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := io.WriteString(streams.Out, version.Get().String()+"\n")
			return err
		},
	}
}
