package main

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	"github.com/apf-operator/apf-operator/internal/cli/explain"
	"github.com/apf-operator/apf-operator/internal/cli/importer"
	"github.com/apf-operator/apf-operator/internal/cli/prune"
	"github.com/apf-operator/apf-operator/internal/cli/validate"
	versioncmd "github.com/apf-operator/apf-operator/internal/cli/version"
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
		newManagerCommand(),
		legacyCommand("validate", "Validate RequestPriority and FlowSchema manifests offline", validate.Run),
		legacyCommand("explain", "Show how a request would be classified", explain.Run),
		importer.NewCommand(streams),
		prune.NewCommand(streams),
		versioncmd.NewCommand(streams),
	)
	return root
}

// newManagerCommand is `apf-operator manager`: the operator. Its flags keep the names the chart
// and config/ pass; a wrong value is a usage error (exit code 2) naming the flag.
func newManagerCommand() *cobra.Command {
	var f *managerFlags
	cmd := &cobra.Command{
		Use:   "manager [flags]",
		Short: "Run the operator (the chart's Deployment runs this)",
		Long: `Runs the operator until SIGTERM: the reconcilers (on the leader only with --leader-elect,
except the EventRateLimit configuration, loaded on every replica), the validating webhooks
(every replica) and the metrics and health endpoints.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := f.check(); err != nil {
				return cmdutil.UsageErrorf("%v", err)
			}
			if err := runManager(f); err != nil {
				return &cmdutil.ExitError{Code: cmdutil.ExitFailure} // logged by runManager
			}
			return nil
		},
	}
	f = bindManagerFlags(cmd.Flags())
	return cmd
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
