package importer

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// Exit codes of Run: cmdutil's, and ExitUnenforced.
const (
	// ExitOK: everything selected was imported and will be enforced as the native objects are.
	ExitOK = cmdutil.ExitOK
	// ExitError: something could not be imported (it is left out), or an input could not be read.
	ExitError = cmdutil.ExitFailure
	// ExitUsage: the command line was wrong.
	ExitUsage = cmdutil.ExitUsage
	// ExitUnenforced: everything was imported, but some FlowSchema refers to a level that exists
	// neither among the inputs nor in the cluster or bootstrap set: it will not be enforced.
	ExitUnenforced = 3
)

// long is the command's description in --help.
const long = `Reads kube-apiserver's native flow control objects (flowcontrol.apiserver.k8s.io v1, v1beta3,
v1beta2 or v1beta1 PriorityLevelConfiguration and FlowSchema, converted as kube-apiserver converts
them) and prints RequestPriority and FlowSchema manifests that classify every request the same
way. kube-apiserver's mandatory objects and the objects the operator projected are never
imported; its suggested objects only with --include-bootstrap.

A FlowSchema's level that the inputs do not define (workload-high, leader-election, catch-all,
...) becomes a RequestPriority bound to it (spec.nativeLevel): no level is added, the FlowSchema
projects onto the existing one. Existing means in the cluster with --from-cluster, else in
kube-apiserver's bootstrap set of --kubernetes-version. kube-apiserver's own levels among the
inputs are bound too.

Levels get priorityLevel 1000, 2000, ... in the order their FlowSchemas first match; a
FlowSchema's matchingPriority is its matchingPrecedence × 1000. What cannot be imported exactly
(a level with limitResponse Reject and the FlowSchemas referring to it) is reported on standard
error and left out. Exit codes: 0 everything imported and enforced as the native objects are;
1 something left out (or an input unreadable); 2 a usage error; 3 everything imported, but some
FlowSchema refers to a level that exists nowhere known and will not be enforced.

Without -o the output is YAML documents, each preceded by a comment naming the native object
it came from; -o json|yaml prints them as one v1 List, -o name their names, -o jsonpath=...
(or go-template=...) applies the template to that List.`

const example = `  # Import the native objects of a manifest file, or of standard input
  apf-operator import -f flowschemas.yaml
  kubectl get prioritylevelconfigurations,flowschemas -o yaml | apf-operator import -f -

  # Import the live cluster's objects, of a given kubeconfig context, as JSON
  apf-operator import --from-cluster --context prod -o json

  # The names of the objects an import would create
  apf-operator import --from-cluster -o name`

// options are the parsed command line.
type options struct {
	paths            []string
	fromCluster      bool
	includeBootstrap bool
	kubeVersion      string
	kubeVersionSet   bool
	config           *genericclioptions.ConfigFlags
	configSet        *pflag.FlagSet // the flags config added, to tell whether one was given
	print            *genericclioptions.PrintFlags
}

// NewCommand returns `import`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{
		config:    genericclioptions.NewConfigFlags(true),
		configSet: pflag.NewFlagSet("kubeconfig", pflag.ContinueOnError),
		print:     genericclioptions.NewPrintFlags("imported"),
	}
	cmd := &cobra.Command{
		Use:     "import (-f PATH [-f PATH]... | --from-cluster) [--include-bootstrap] [-o FORMAT]",
		Short:   "Convert kube-apiserver's native flow control objects into manifests",
		Long:    long,
		Example: example,
		RunE: func(c *cobra.Command, args []string) error {
			o.paths = append(o.paths, args...) // paths may also follow the flags
			o.kubeVersionSet = c.Flags().Changed("kubernetes-version")
			if err := o.check(); err != nil {
				return err
			}
			return o.run(c.Context(), streams)
		},
	}
	flags := cmd.Flags()
	flags.StringSliceVarP(&o.paths, "filename", "f", nil, "A file of native PriorityLevelConfiguration and FlowSchema objects, "+
		"a directory (searched recursively) or - for standard input; repeatable")
	flags.BoolVar(&o.fromCluster, "from-cluster", false, "Read the native objects of the live cluster instead of -f")
	flags.BoolVar(&o.includeBootstrap, "include-bootstrap", false, "Also import kube-apiserver's suggested objects "+
		"(never its mandatory exempt and catch-all)")
	flags.StringVar(&o.kubeVersion, "kubernetes-version", bootstrapset.Newest(), "With -f: the Kubernetes version "+
		"whose bootstrap levels a FlowSchema may refer to without the inputs defining them ("+
		strings.Join(bootstrapset.Versions(), ", ")+")")
	o.print.AddFlags(cmd)
	cmdutil.CompleteValues(cmd, "kubernetes-version", bootstrapset.Versions()...)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(o.print.AllowedFormats(), cobra.ShellCompDirectiveNoFileComp))
	o.config.Namespace = nil // the objects are cluster-scoped: no -n/--namespace
	o.config.AddFlags(o.configSet)
	flags.AddFlagSet(o.configSet)
	return cmd
}

// check refuses contradictory or missing inputs (exit code 2).
func (o *options) check() error {
	switch {
	case o.fromCluster && len(o.paths) > 0:
		return cmdutil.UsageErrorf("give either -f PATH or --from-cluster, not both")
	case !o.fromCluster && len(o.paths) == 0:
		return cmdutil.UsageErrorf("nothing to import: pass -f PATH (a file, a directory or -) or --from-cluster")
	case !o.fromCluster && o.configFlagGiven() != "":
		return cmdutil.UsageErrorf("--%s needs --from-cluster", o.configFlagGiven())
	case o.fromCluster && o.kubeVersionSet:
		return cmdutil.UsageErrorf("--kubernetes-version is for -f: with --from-cluster the cluster's own levels are used")
	}
	if _, err := bootstrapset.ForVersion(o.kubeVersion); err != nil {
		return cmdutil.UsageErrorf("--kubernetes-version: %v", err)
	}
	if *o.print.OutputFormat != "" {
		if _, err := o.print.ToPrinter(); err != nil {
			return cmdutil.UsageErrorf("%v", err)
		}
	}
	return nil
}

// configFlagGiven names the first cluster connection flag on the command line, if any.
func (o *options) configFlagGiven() string {
	name := ""
	o.configSet.VisitAll(func(f *pflag.Flag) { // the command's flag set parsed them: ask each flag
		if name == "" && f.Changed {
			name = f.Name
		}
	})
	return name
}

// run imports, prints the manifests and reports on standard error; the exit code is 1 when
// something could not be imported exactly.
func (o *options) run(ctx context.Context, streams genericiooptions.IOStreams) error {
	if ctx == nil {
		ctx = context.Background()
	}
	in, err := o.load(ctx, streams.In)
	if err != nil {
		return err
	}
	existing, err := o.existing(in)
	if err != nil {
		return err
	}
	res := Import(in, Options{IncludeBootstrap: o.includeBootstrap, Existing: existing})
	if err := o.write(streams.Out, res); err != nil {
		return err
	}
	res.Report(streams.ErrOut)
	switch {
	case len(res.Problems) > 0:
		return &cmdutil.ExitError{Code: ExitError}
	case len(res.Unenforced) > 0:
		return &cmdutil.ExitError{Code: ExitUnenforced}
	}
	return nil
}

// existing is the levels references bind to: the cluster's, read with the inputs, or the
// bootstrap set of --kubernetes-version.
func (o *options) existing(in *Input) (Existing, error) {
	if o.fromCluster {
		return ExistingLevels("the cluster", in.PriorityLevels), nil
	}
	set, err := bootstrapset.ForVersion(o.kubeVersion)
	if err != nil {
		return Existing{}, err
	}
	return ExistingLevels(fmt.Sprintf("kube-apiserver %s's bootstrap set (%s)", set.KubernetesVersion, set.Module),
		set.PriorityLevels()), nil
}

// write prints the result as -o asks: the commented YAML documents by default.
func (o *options) write(w io.Writer, res *Result) error {
	if *o.print.OutputFormat == "" {
		return Write(w, res)
	}
	printer, err := o.print.ToPrinter()
	if err != nil {
		return err
	}
	list, err := res.List()
	if err != nil {
		return err
	}
	return printer.PrintObj(list, w)
}

// load reads the native objects from the files or the cluster.
func (o *options) load(ctx context.Context, stdin io.Reader) (*Input, error) {
	if o.fromCluster {
		return loadCluster(ctx, o.config)
	}
	return readFiles(o.paths, stdin)
}

// Run executes `apf-operator import` with args (the arguments after the subcommand) and
// returns the exit code, printing errors as the apf-operator binary does.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	streams := genericiooptions.IOStreams{In: stdin, Out: stdout, ErrOut: stderr}
	root := &cobra.Command{Use: "apf-operator"}
	root.AddCommand(NewCommand(streams))
	return cmdutil.Execute(root, append([]string{"import"}, args...), streams)
}
