package cmdutil

import (
	"flag"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
)

// AddGlobalFlags gives root kubectl's global spellings: -v/--v for klog's log verbosity (for
// example -v=6 logs every request to kube-apiserver), on every subcommand, and --version with
// no shorthand (cobra would otherwise take -v for it). root must set Version.
func AddGlobalFlags(root *cobra.Command) {
	root.Flags().Bool("version", false, "print the version and exit")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	v := pflag.PFlagFromGoFlag(klogFlags.Lookup("v"))
	v.Shorthand = "v"
	v.Usage = "log verbosity, as kubectl's -v: 0 (default) to 9; 6 logs each request to kube-apiserver"
	root.PersistentFlags().AddFlag(v)
}

// CompleteValues registers the fixed values of an enum flag (-o, --target, --verb, ...) for
// shell completion, kubectl's plugin completion (kubectl_complete-apf) included.
func CompleteValues(cmd *cobra.Command, flag string, values ...string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}
