// Package recommend is `apf-operator recommend` (and `kubectl apf recommend`): the autopilot's
// recommendation (internal/autopilot) for the operator's levels, from kube-apiserver's demand
// metrics over a window, printed as a patch for the manifests in Git: a table, a kustomize
// patch (-o yaml; -o json: the same objects as a v1 List) or Markdown for a pull request
// (-o github). It reads a live cluster, or two saved /metrics texts with the manifests; it
// never writes to the cluster.
package recommend

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/autopilot"
	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
)

// outputs are the values of -o (the table is the default, without -o).
var outputs = []string{"yaml", "json", "github"}

// options are recommend's flags.
type options struct {
	output    string
	window    time.Duration
	filenames []string
	// metricsFrom and metricsTo are saved /metrics texts, one per kube-apiserver replica.
	metricsFrom, metricsTo []string
	exitCode               bool
	// windowSet is whether --window was given (required with saved metrics).
	windowSet bool
}

// NewCommand returns `recommend`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := options{}
	kube := genericclioptions.NewConfigFlags(true)
	cmd := &cobra.Command{
		Use:   "recommend",
		Short: "Recommend the operator's levels' shares from kube-apiserver's measured demand, as a patch for Git",
		Long: `recommend sizes the nominal shares (and lendable and borrowing-limit percentages) of the
operator's RequestPriorities from the seat demand kube-apiserver measured over a window, with
the autopilot's algorithm (docs/autopilot.md), and prints the result as a patch for the
manifests in Git: a table (default), a kustomize patch (-o yaml; -o json prints the same partial
objects as a v1 List) or Markdown for a pull request (-o github). Every projected
RequestPriority with shares is in the pool, and the pool's total shares never change, so every
other level keeps its nominal seats.

Live (default), it reads kube-apiserver's /metrics twice, --window apart, and the cluster's
RequestPriorities and native PriorityLevelConfigurations (one kube-apiserver replica: the one
the Service reaches). With --metrics-from and --metrics-to (two saved 'kubectl get --raw
/metrics' texts, repeated once per replica and summed), it reads the RequestPriorities from
-f and needs --window: how long apart the two texts were saved. -f names, live, the files of
the manifests, so that the patch points at their lines. recommend never writes to the cluster.`,
		Example: `  kubectl apf recommend -f deploy/apf/ --window 10m
  apf-operator recommend -f deploy/apf/ -o yaml > apf-patch.yaml
  kubectl get --raw /metrics > before.txt; sleep 300; kubectl get --raw /metrics > after.txt
  apf-operator recommend --metrics-from before.txt --metrics-to after.txt --window 5m -f deploy/apf/ -o github
  apf-operator recommend --context prod --exit-code -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.windowSet = c.Flags().Changed("window")
			if err := o.validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt)
			defer stop()
			in, err := o.read(ctx, kube, streams)
			if err != nil {
				return err
			}
			return o.run(in, streams)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "output format: yaml (the patch), json (the patch as a v1 List) or github "+
		"(Markdown for a pull request); default a table")
	f.DurationVar(&o.window, "window", 5*time.Minute, "live: how long to measure demand (between the two reads of /metrics); "+
		"with saved metrics: how long apart they were saved (required)")
	f.StringSliceVarP(&o.filenames, "filename", "f", nil, "manifests of the RequestPriorities (files, directories, - for stdin): "+
		"required with saved metrics; live, they name the files in the patch")
	f.StringSliceVar(&o.metricsFrom, "metrics-from", nil, "saved /metrics text at the window's start (repeat once per kube-apiserver replica)")
	f.StringSliceVar(&o.metricsTo, "metrics-to", nil, "saved /metrics text at the window's end (repeat once per replica, in the same order)")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit with 1 when a change is recommended (as git diff --exit-code), for CI")
	kube.Namespace = nil // the APF objects are cluster-scoped: no -n/--namespace
	kube.AddFlags(f)
	cmdutil.CompleteValues(cmd, "output", outputs...)
	return cmd
}

// saved reports whether the metrics come from files.
func (o *options) saved() bool { return len(o.metricsFrom) > 0 || len(o.metricsTo) > 0 }

func (o *options) validate() error {
	switch {
	case o.output != "" && !slices.Contains(outputs, o.output):
		return cmdutil.UsageErrorf("--output %q: use yaml, json or github, or leave it out for the table", o.output)
	case o.window < autopilot.DefaultConfig().MinWindow:
		return cmdutil.UsageErrorf("--window %s: use at least %s (the autopilot's shortest window that counts)",
			o.window, autopilot.DefaultConfig().MinWindow)
	case !o.saved():
		return nil
	case len(o.metricsFrom) != len(o.metricsTo):
		return cmdutil.UsageErrorf("--metrics-from names %d file(s) and --metrics-to %d: give both, once per kube-apiserver replica, in the same order",
			len(o.metricsFrom), len(o.metricsTo))
	case len(o.filenames) == 0:
		return cmdutil.UsageErrorf("--metrics-from/--metrics-to need -f/--filename: the RequestPriority manifests the metrics are about")
	case !o.windowSet:
		return cmdutil.UsageErrorf("--metrics-from/--metrics-to need --window: how long apart the two texts were saved " +
			"(a /metrics text has no time of its own)")
	}
	return nil
}

// run computes the recommendation of in and prints it.
func (o *options) run(in *input, streams genericiooptions.IOStreams) error {
	cfg := autopilot.DefaultConfig()
	w := autopilot.WindowFrom(cfg, in.prev, in.cur, names(in.levels))
	if w.Incomplete != "" {
		return fmt.Errorf("the window cannot drive a recommendation: %s", w.Incomplete)
	}
	rep, err := buildReport(autopilot.Recommend(cfg, in.levels, w), in.levels, in.where)
	if err != nil {
		return err
	}
	rep.Source, rep.Window, rep.Skipped = in.source, o.window, in.skipped
	if err := o.print(streams, rep); err != nil {
		return err
	}
	if o.exitCode && rep.changes() > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure}
	}
	return nil
}

// print writes the report in the chosen format.
func (o *options) print(streams genericiooptions.IOStreams, rep *report) error {
	patch, err := rep.patch()
	if err != nil {
		return err
	}
	switch o.output {
	case "yaml", "json":
		for _, s := range rep.Skipped {
			fmt.Fprintf(streams.ErrOut, "skipped %s: %s\n", s.Object, s.Reason)
		}
		if len(patch) == 0 {
			fmt.Fprintf(streams.ErrOut, "no change recommended (%s)\n", rep.heading())
		}
		if o.output == "json" {
			list, err := rep.patchList()
			if err != nil {
				return err
			}
			patch = list
		}
		_, err := streams.Out.Write(patch)
		return err
	case "github":
		return writeGitHub(streams.Out, rep, patch)
	}
	return writeTable(streams.Out, rep)
}

func names(levels []autopilot.Level) []string {
	out := make([]string, len(levels))
	for i, l := range levels {
		out[i] = l.Name
	}
	return out
}

// progress writes a progress line to standard error.
func progress(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, format+"\n", args...)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
