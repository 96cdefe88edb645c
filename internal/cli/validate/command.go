package validate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/budget"
)

// Exit codes of Run (cmdutil's, kept here for the callers of Run).
const (
	// ExitOK: no error (warnings allowed unless --strict).
	ExitOK = cmdutil.ExitOK
	// ExitError: at least one error (a warning with --strict, nothing checked without
	// --allow-empty, an unreadable input path).
	ExitError = cmdutil.ExitFailure
	// ExitUsage: a usage error, or the findings could not be written.
	ExitUsage = cmdutil.ExitUsage
)

// Targets of --target: what the manifests must be fit for.
const (
	// TargetFilter checks the rules the admission webhooks enforce: what the in-process filter
	// runs.
	TargetFilter = "filter"
	// TargetNative also requires every object to project exactly onto kube-apiserver's native
	// flowcontrol.apiserver.k8s.io/v1 objects within the share budget: what the chart's default
	// enforcement (native) refuses otherwise. The default.
	TargetNative = "native"
)

// emptyMessage is the error when no object of this operator's API was found.
const emptyMessage = "no RequestPriority or FlowSchema objects were checked"

// options are the parsed command line.
type options struct {
	paths    []string
	excludes []string
	output   string
	target   string
	// maxSeatLoss is --native-max-seat-loss-percent.
	maxSeatLoss int
	// unmatched is --native-unmatched: the projection's choice for unmatched requests.
	unmatched  string
	strict     bool
	allowEmpty bool
	// perDirectory is --per-directory: each subdirectory of a directory given is checked on its own.
	perDirectory bool
	// fromCluster is --from-cluster: bound levels are checked against the cluster's levels,
	// read with config; levels is what is known of them.
	fromCluster bool
	config      *genericclioptions.ConfigFlags
	levels      nativeLevels
}

// Run executes `apf-operator validate` with args (the arguments after the subcommand) and
// returns the exit code; errors are printed to stderr. Tests and other packages call it.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if stdin == nil {
		stdin = &bytes.Buffer{}
	}
	streams := genericiooptions.IOStreams{In: stdin, Out: stdout, ErrOut: stderr}
	return cmdutil.Execute(NewCommand(streams), args, streams)
}

// NewCommand is `apf-operator validate` (and `kubectl apf validate`).
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "validate -f PATH [-f PATH]... [PATH...]",
		Short: "Validate RequestPriority and FlowSchema manifests offline",
		Long:  longHelp,
		Example: `  # One cluster's configuration, checked against what the chart's default install enforces
  apf-operator validate -f clusters/prod/apf/

  # A rendered stream on standard input
  kustomize build overlays/prod | apf-operator validate -f -

  # A fleet repository, one directory per cluster, as GitHub Actions annotations
  apf-operator validate -o github --strict --per-directory -f clusters/

  # A Helm chart's rendered objects (templates are not YAML until rendered)
  helm template my-release charts/my-chart -f values.yaml | apf-operator validate -f -`,
		RunE: func(_ *cobra.Command, args []string) error {
			o.paths = append(o.paths, args...)
			if err := o.complete(); err != nil {
				return err
			}
			return o.run(streams)
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.paths, "filename", "f", nil, "a manifest file, a directory (searched recursively for .yaml, .yml "+
		"and .json files) or - for standard input; repeatable or comma-separated, as kubectl's -f")
	f.StringArrayVar(&o.excludes, "exclude", nil, "skip the files and directories whose path relative to a given directory, "+
		"any trailing part of that path, or base name matches this glob (for example 'templates/*' or '*.tpl.yaml'); repeatable")
	f.StringVarP(&o.output, "output", "o", outputText, "output format: text (FILE:LINE:COLUMN: FIELD: MESSAGE), json, yaml, "+
		"or github (GitHub Actions annotations)")
	f.StringVar(&o.target, "target", TargetNative, "what the configuration must be fit for: native (the default, what "+
		"the chart's enforcement: native installs and its webhook enforces: the admission rules, and exactly projectable "+
		"onto kube-apiserver's flowcontrol.apiserver.k8s.io/v1 objects within the share budget) or filter (the "+
		"admission rules only: what --enforcement=filter and the in-process filter need)")
	f.BoolVar(&o.strict, "strict", false, "fail (exit 1) on warnings too")
	f.BoolVar(&o.perDirectory, "per-directory", false, "check each subdirectory of a directory given as its own "+
		"configuration (one directory per cluster, as in a fleet repository: clusters/production/, clusters/staging/), "+
		"so that objects repeated across clusters are not duplicates; files directly in the directory form one more set")
	f.BoolVar(&o.allowEmpty, "allow-empty", false, "succeed when the paths hold no RequestPriority, FlowSchema or "+
		"EventRateLimit object (by default that is an error: a wrong path or an empty kustomize build would pass unnoticed)")
	f.IntVar(&o.maxSeatLoss, "native-max-seat-loss-percent", budget.DefaultMaxLossPercent, "with --target native, the "+
		"operator's setting of that name: the RequestPriorities' shares must fit the budget that keeps kube-apiserver's "+
		"mandatory and suggested levels within this loss (0 to 90)")
	f.StringVar(&o.unmatched, "native-unmatched", string(native.UnmatchedKubeAPIServer), "with --target native, the "+
		"operator's --native-unmatched: kube-apiserver (requests no projected FlowSchema matches are left to its own "+
		"schemas) or operator (the backstop is projected too, so its level is checked as well)")
	f.BoolVar(&o.fromCluster, "from-cluster", false, "with --target native, read the live cluster's native priority "+
		"levels (--kubeconfig, --context): every spec.nativeLevel must name one of them, and the "+
		"share budget is that cluster's; without it kube-apiserver's bootstrap levels are assumed")
	o.config = genericclioptions.NewConfigFlags(true)
	f.StringVar(o.config.KubeConfig, "kubeconfig", "", "with --from-cluster, the kubeconfig file (default: $KUBECONFIG, "+
		"then ~/.kube/config)")
	f.StringVar(o.config.Context, "context", "", "with --from-cluster, the kubeconfig context")
	cmdutil.CompleteValues(cmd, "output", outputText, outputJSON, outputYAML, outputGitHub)
	cmdutil.CompleteValues(cmd, "target", TargetNative, TargetFilter)
	cmdutil.CompleteValues(cmd, "native-unmatched", string(native.UnmatchedKubeAPIServer), string(native.UnmatchedOperator))
	return cmd
}

// longHelp is validate's --help text.
const longHelp = `Checks RequestPriority, FlowSchema and EventRateLimit manifests offline: against the CRDs'
own OpenAPI schemas and CEL rules (what the API server enforces) and the admission webhooks'
rules, across the whole set (unique levels and names, references).

Each finding is a line FILE:LINE:COLUMN: FIELD: MESSAGE pointing at the offending field
(warnings read FILE:LINE:COLUMN: warning: ...), sorted by file, line and column; -o json and
-o yaml give the same findings as one document, -o github as GitHub Actions annotations. The
last line on standard error counts the objects, errors and warnings. Native
flowcontrol.apiserver.k8s.io objects are not checked: a warning names each, to be converted
with 'apf-operator import'.

Exit code 0: no error (and no warning with --strict); 1: at least one error (or warning with
--strict), or no object checked without --allow-empty; 2: usage error, or the findings could
not be written.

With --target native (the default: the chart installs enforcement: native, whose webhook
refuses what cannot be projected), every object must also be projected exactly onto
kube-apiserver's native PriorityLevelConfiguration and FlowSchema objects, as the operator
projects them into a cluster; the RequestPriorities' assuredConcurrencyShares together must
fit the share budget of --native-max-seat-loss-percent (docs/enforcement.md, "Share
budget"). A RequestPriority bound to a native level (spec.nativeLevel) must name one of
kube-apiserver's bootstrap levels, else a warning says to check it with --from-cluster, which
reads the live cluster's levels (and its share budget) instead. --target filter checks the admission rules only, for --enforcement=filter. The
summary names the target used.

Documents without apiVersion or kind, and documents whose API group looks like a
misspelling of flowcontrol.apf-operator.io, are errors, as kubectl apply refuses them;
documents of other API groups are skipped and counted in the summary.`

// complete checks the flags.
func (o *options) complete() error {
	if len(o.paths) == 0 {
		return cmdutil.UsageErrorf("no manifests given: pass -f PATH (a file, a directory or -)")
	}
	if !validOutputs[o.output] {
		return cmdutil.UsageErrorf("unsupported output %q: use %s, %s, %s or %s", o.output, outputText, outputJSON, outputYAML, outputGitHub)
	}
	if o.target != TargetFilter && o.target != TargetNative {
		return cmdutil.UsageErrorf("unsupported --target %q: use %s or %s", o.target, TargetFilter, TargetNative)
	}
	if o.maxSeatLoss < 0 || o.maxSeatLoss > budget.MaxMaxLossPercent {
		return cmdutil.UsageErrorf("--native-max-seat-loss-percent=%d: use 0 to %d", o.maxSeatLoss, budget.MaxMaxLossPercent)
	}
	if _, err := native.ParseUnmatched(o.unmatched); err != nil {
		return cmdutil.UsageErrorf("--native-unmatched: %v", err)
	}
	for _, g := range o.excludes {
		if err := manifest.CheckGlob(g); err != nil {
			return cmdutil.UsageErrorf("--exclude %q: %v", g, err)
		}
	}
	return nil
}

// run reads, checks and reports; the summary goes to standard error.
func (o *options) run(streams genericiooptions.IOStreams) error {
	sets, err := o.sets()
	if err != nil {
		return err
	}
	if o.fromCluster && o.target == TargetNative {
		if o.levels, err = loadLevels(context.Background(), o.config); err != nil {
			return &cmdutil.ExitError{Code: ExitUsage, Err: err}
		}
	}
	var findings []manifest.Finding
	var total tally
	for _, paths := range sets {
		f, t := o.checkSet(paths, streams.In)
		findings = append(findings, f...)
		total.objects, total.docs, total.skipped = total.objects+t.objects, total.docs+t.docs, total.skipped+t.skipped
	}
	if errs, _ := manifest.Count(findings); total.objects == 0 && errs == 0 && !o.allowEmpty {
		findings = append(findings, o.emptyFinding(total.docs)) // unless the errors already say why
	}
	manifest.SortFindings(findings)
	if err := report(findings, o.output, streams.Out); err != nil {
		return &cmdutil.ExitError{Code: ExitUsage, Err: fmt.Errorf("writing the findings: %w", err)}
	}
	errs, warnings := manifest.Count(findings)
	fmt.Fprintf(streams.ErrOut, "%d object(s) checked for --target %s", total.objects, o.target)
	if o.perDirectory {
		fmt.Fprintf(streams.ErrOut, " in %d set(s)", len(sets))
	}
	fmt.Fprintf(streams.ErrOut, ": %d error(s), %d warning(s)", errs, warnings)
	if total.skipped > 0 {
		fmt.Fprintf(streams.ErrOut, "; %d document(s) of other kinds skipped", total.skipped)
	}
	fmt.Fprintln(streams.ErrOut)
	if errs > 0 || o.strict && warnings > 0 {
		return &cmdutil.ExitError{Code: ExitError}
	}
	return nil
}

// tally counts what one set held.
type tally struct {
	objects, docs, skipped int
}

// checkSet reads the paths as one configuration (one cluster's) and checks it.
func (o *options) checkSet(paths []string, stdin io.Reader) ([]manifest.Finding, tally) {
	docs, findings := manifest.Read(paths, o.excludes, stdin)
	checked, objs, skipped := check(context.Background(), docs)
	findings = append(findings, checked...)
	if o.target == TargetNative {
		unmatched, _ := native.ParseUnmatched(o.unmatched)
		findings = append(findings, nativeFindings(objs, int32(o.maxSeatLoss), unmatched, o.levels)...)
	}
	return findings, tally{objects: len(objs), docs: len(docs), skipped: skipped}
}

// sets groups the paths into the configurations to check on their own: all of them as one,
// or with --per-directory each subdirectory of a directory given (one per cluster of a fleet
// repository), the files directly in it making one more.
func (o *options) sets() ([][]string, error) {
	if !o.perDirectory {
		return [][]string{o.paths}, nil
	}
	var sets [][]string
	for _, p := range o.paths {
		info, err := os.Stat(p)
		if p == "-" || err != nil || !info.IsDir() {
			sets = append(sets, []string{p}) // reading reports what cannot be read
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, &cmdutil.ExitError{Code: ExitError, Err: err}
		}
		var files []string
		for _, e := range entries {
			if e.IsDir() {
				sets = append(sets, []string{filepath.Join(p, e.Name())})
			} else {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
		if len(files) > 0 {
			sets = append(sets, files)
		}
	}
	return sets, nil
}

// emptyFinding is the error when no object of this operator's API was found: a wrong path or
// an empty kustomize build would otherwise pass unnoticed. It is a finding like any other, so
// that the counts of every output agree with the exit code.
func (o *options) emptyFinding(docs int) manifest.Finding {
	return manifest.Finding{File: strings.Join(o.paths, ","), Severity: manifest.SeverityError,
		Message: fmt.Sprintf("%s (%d document(s) read): check the paths and --exclude, or pass --allow-empty "+
			"if that is expected", emptyMessage, docs)}
}
