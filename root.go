package main

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	"github.com/apf-operator/apf-operator/internal/cli/explain"
	"github.com/apf-operator/apf-operator/internal/cli/importer"
	"github.com/apf-operator/apf-operator/internal/cli/prune"
	"github.com/apf-operator/apf-operator/internal/cli/recommend"
	"github.com/apf-operator/apf-operator/internal/cli/replay"
	"github.com/apf-operator/apf-operator/internal/cli/top"
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
	cmdutil.AddGlobalFlags(root)
	root.AddCommand(
		newManagerCommand(),
		validate.NewCommand(streams),
		explain.NewCommand(streams),
		importer.NewCommand(streams),
		prune.NewCommand(streams),
		top.NewCommand(streams),
		recommend.NewCommand(streams),
		replay.NewCommand(streams),
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
			if err := f.options.Validate(); err != nil {
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
