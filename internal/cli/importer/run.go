package importer

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/apf-operator/apf-operator/internal/cli/validate"
)

// Exit codes of Run.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// usageLine is the synopsis printed with usage errors and --help.
const usageLine = "Usage: apf-operator import (-f PATH [-f PATH]... | --from-cluster [--kubeconfig PATH]) [--include-bootstrap]\n"

// options are the parsed command line.
type options struct {
	paths            []string
	fromCluster      bool
	kubeconfig       string
	includeBootstrap bool
}

// Run executes `apf-operator import` with args (the arguments after the subcommand) and
// returns the exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "apf-operator import: %v\n%s", err, usageLine)
		return ExitUsage
	}
	in, err := load(context.Background(), o, stdin)
	if err != nil {
		fmt.Fprintln(stderr, "apf-operator import:", err)
		return ExitError
	}
	res := Import(in, Options{IncludeBootstrap: o.includeBootstrap})
	if err := Write(stdout, res); err != nil {
		fmt.Fprintln(stderr, "apf-operator import:", err)
		return ExitError
	}
	res.Report(stderr)
	if len(res.Problems) > 0 {
		return ExitError
	}
	return ExitOK
}

// parse reads the flags; paths may also follow the flags or sit between them.
func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("apf-operator import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(fs, stderr) }
	fs.Var((*validate.PathList)(&o.paths), "f", "a file of native PriorityLevelConfiguration and FlowSchema objects, "+
		"a directory (searched recursively) or - for standard input; repeatable")
	fs.BoolVar(&o.fromCluster, "from-cluster", false, "read the native objects of the live cluster instead of -f")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig for --from-cluster (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	fs.BoolVar(&o.includeBootstrap, "include-bootstrap", false, "also import kube-apiserver's suggested objects "+
		"(never its mandatory exempt and catch-all)")
	for { // paths may sit between flags
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		o.paths, args = append(o.paths, fs.Arg(0)), fs.Args()[1:]
	}
	switch {
	case o.fromCluster && len(o.paths) > 0:
		return nil, errors.New("give either -f PATH or --from-cluster, not both")
	case !o.fromCluster && len(o.paths) == 0:
		return nil, errors.New("nothing to import: pass -f PATH (a file, a directory or -) or --from-cluster")
	case o.kubeconfig != "" && !o.fromCluster:
		return nil, errors.New("--kubeconfig needs --from-cluster")
	}
	return o, nil
}

// usage prints --help.
func usage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, usageLine+`
Reads kube-apiserver's native flow control objects (flowcontrol.apiserver.k8s.io v1 or v1beta3
PriorityLevelConfiguration and FlowSchema) and prints RequestPriority and FlowSchema manifests
that classify every request the same way. kube-apiserver's mandatory objects and the objects
the operator projected are never imported; its suggested objects only with --include-bootstrap.
Levels get priorityLevel 1000, 2000, ... in the order their FlowSchemas first match; a
FlowSchema's matchingPriority is its matchingPrecedence × 1000. What cannot be imported exactly
(a level with limitResponse Reject and the FlowSchemas referring to it) is reported on standard
error and left out; the exit code is then 1.

Flags:
`)
	fs.PrintDefaults()
}

// load reads the native objects from the files or the cluster.
func load(ctx context.Context, o *options, stdin io.Reader) (*Input, error) {
	if o.fromCluster {
		return loadCluster(ctx, o.kubeconfig)
	}
	return readFiles(o.paths, stdin)
}
