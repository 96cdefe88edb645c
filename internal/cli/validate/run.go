package validate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/budget"
)

// Exit codes of Run.
const (
	// ExitOK: no error (warnings allowed).
	ExitOK = 0
	// ExitError: at least one error in the manifests (an unreadable input path included).
	ExitError = 1
	// ExitUsage: a usage error, or the findings could not be written.
	ExitUsage = 2
)

// Targets of --target: what the manifests must be fit for.
const (
	// TargetFilter checks the rules the admission webhooks enforce: what the in-process filter
	// runs (the default).
	TargetFilter = "filter"
	// TargetNative also requires every object to project exactly onto kube-apiserver's native
	// flowcontrol.apiserver.k8s.io/v1 objects.
	TargetNative = "native"
)

// usageLine is the synopsis printed with usage errors and --help.
const usageLine = "Usage: apf-operator validate -f PATH [-f PATH]... [PATH...] [-o text|json|github] [--target filter|native] [--native-unmatched kube-apiserver|operator]\n"

// options are the parsed command line.
type options struct {
	paths  []string
	output string
	target string
	// maxSeatLoss is --native-max-seat-loss-percent.
	maxSeatLoss int
	// unmatched is --native-unmatched: the projection's choice for unmatched requests.
	unmatched native.Unmatched
}

// PathList is a flag.Value that collects repeated (or comma-separated) -f values; explain
// takes its manifests the same way.
type PathList []string

// String joins the paths with commas.
func (p *PathList) String() string { return strings.Join(*p, ",") }

// Set adds the comma-separated paths of one -f value.
func (p *PathList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s != "" {
			*p = append(*p, s)
		}
	}
	return nil
}

// Run executes `apf-operator validate` with args (the arguments after the subcommand) and
// returns the exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n%s", err, usageLine)
		return ExitUsage
	}
	docs, readFindings := collect(opts.paths, stdin)
	checked, objs, skipped := check(context.Background(), docs)
	findings := append(readFindings, checked...)
	if opts.target == TargetNative {
		findings = append(findings, nativeFindings(objs, int32(opts.maxSeatLoss), opts.unmatched)...)
	}
	objects := len(objs)
	sortFindings(findings)
	if err := report(findings, opts.output, stdout); err != nil {
		fmt.Fprintf(stderr, "Error: writing the findings: %v\n", err)
		return ExitUsage
	}
	errs, warnings := count(findings)
	fmt.Fprintf(stderr, "%d object(s) checked: %d error(s), %d warning(s)", objects, errs, warnings)
	if skipped > 0 {
		fmt.Fprintf(stderr, "; %d document(s) of other kinds skipped", skipped)
	}
	fmt.Fprintln(stderr)
	if errs > 0 {
		return ExitError
	}
	return ExitOK
}

// parse reads the flags; paths may also follow the flags or sit between them.
func parse(args []string, stderr io.Writer) (options, error) {
	var paths PathList
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(fs, stderr) }
	fs.Var(&paths, "f", "a manifest file, a directory (searched recursively) or - for standard input; repeatable")
	output := fs.String("o", outputText, "output format: text (FILE:DOC: FIELD: MESSAGE lines), json, or github "+
		"(GitHub Actions annotations: ::error file=F,line=L,title=T::MESSAGE)")
	target := fs.String("target", TargetFilter, "what the configuration must be fit for: filter (the admission rules; "+
		"what the in-process filter enforces) or native (also exactly projectable onto kube-apiserver's "+
		"flowcontrol.apiserver.k8s.io/v1 objects)")
	maxSeatLoss := fs.Int("native-max-seat-loss-percent", budget.DefaultMaxLossPercent, "with --target native, the "+
		"operator's setting of that name: the RequestPriorities' shares must fit the budget that keeps kube-apiserver's "+
		"mandatory and suggested levels within this loss (0 to 90)")
	unmatched := fs.String("native-unmatched", string(native.UnmatchedKubeAPIServer), "with --target native, the "+
		"operator's --native-unmatched: kube-apiserver (requests no projected FlowSchema matches are left to its own "+
		"schemas) or operator (the backstop is projected too, so its level is checked as well)")
	for {
		if err := fs.Parse(args); err != nil {
			return options{}, err
		}
		if fs.NArg() == 0 {
			break
		}
		paths = append(paths, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(paths) == 0 {
		return options{}, errors.New("no manifests given: pass -f PATH (a file, a directory or -)")
	}
	if *output != outputText && *output != outputJSON && *output != outputGitHub {
		return options{}, fmt.Errorf("unsupported output %q: use %s, %s or %s", *output, outputText, outputJSON, outputGitHub)
	}
	if *target != TargetFilter && *target != TargetNative {
		return options{}, fmt.Errorf("unsupported --target %q: use %s or %s", *target, TargetFilter, TargetNative)
	}
	if *maxSeatLoss < 0 || *maxSeatLoss > budget.MaxMaxLossPercent {
		return options{}, fmt.Errorf("--native-max-seat-loss-percent=%d: use 0 to %d", *maxSeatLoss, budget.MaxMaxLossPercent)
	}
	u, err := native.ParseUnmatched(*unmatched)
	if err != nil {
		return options{}, fmt.Errorf("--native-unmatched: %w", err)
	}
	return options{paths: paths, output: *output, target: *target, maxSeatLoss: *maxSeatLoss, unmatched: u}, nil
}

// usage prints --help: the synopsis, what the command checks and the flags.
func usage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, usageLine+`
Checks RequestPriority and FlowSchema manifests offline with the admission webhooks' rules.
Each finding is a line FILE:DOC: FIELD: MESSAGE (-o json: one JSON document with the
line of each finding and the counts; -o github: GitHub Actions annotations). The last line
on standard error counts the objects, errors and warnings. Exit code 0: no error (warnings
allowed); 1: at least one error; 2: usage error, or the findings could not be written.

With --target native, every object must also be projected exactly onto kube-apiserver's
native PriorityLevelConfiguration and FlowSchema objects, as the operator projects them
into a cluster: each object that cannot be (a test on name, a path equality, a
transformation, a pattern over user names...) is an error naming the field, and the
RequestPriorities' assuredConcurrencyShares together must fit the share budget that keeps
kube-apiserver's mandatory and suggested levels within --native-max-seat-loss-percent of
their share of the server (27 shares at 10%; docs/enforcement.md, "Share budget").

Flags:
`)
	fs.PrintDefaults()
}
