// Package replay implements `apf-operator replay`: it reads the requests a cluster served
// (kube-apiserver's audit log, audit.k8s.io/v1 Event lines, or a recorded request list) and
// classifies every one the way kube-apiserver's own flow control does, under the configuration
// in the cluster (or a directory of manifests) and under a proposed one (manifests projected as
// the operator would project them). It reports where the requests land per user, namespace
// and verb, the moves between priority levels, and the seats each level would need over time.
//
// Classification is native.Matches over the native objects, ordered once; the answers are
// cached by the attributes they depend on (see Engine), so a million events replay in seconds.
package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/internal/audit"
	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// outputs are the values of -o.
var outputs = []string{"text", "json", "yaml", "github"}

type options struct {
	auditLogs, requestLists []string
	currentPaths, proposed  []string
	output                  string
	bucket                  time.Duration
	operator, unmatched     string
	config                  *genericclioptions.ConfigFlags
}

// NewCommand returns `replay`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := &options{config: genericclioptions.NewConfigFlags(true)}
	cmd := &cobra.Command{
		Use:   "replay (--audit-log FILE | --requests FILE)... [-f PROPOSED] [--current-dir DIR]",
		Short: "Classify recorded requests under the current and a proposed configuration",
		Long: `replay reads the requests a cluster served, from kube-apiserver's audit log (audit.k8s.io/v1 Event
JSON lines, gzip-compressed or not) or a recorded request list, and classifies each one as kube-apiserver's
flow control does: under the current configuration (the live cluster's FlowSchemas and
PriorityLevelConfigurations, or --current-dir manifests projected onto kube-apiserver's own objects) and
under the proposed one (-f manifests, projected as the operator would). It reports the FlowSchema and
priority level per user, namespace and verb, the moves between levels, and the seats per level over time.`,
		Example: `  # What would this pull request change for the traffic of the last day?
  apf-operator replay --audit-log /var/log/kube-apiserver/audit.log.gz -f config/apf/ -o github

  # Offline: the current manifests against the proposed ones
  apf-operator replay --audit-log audit.log --current-dir main/apf/ -f pr/apf/ -o json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(c.Context(), streams)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.auditLogs, "audit-log", nil, "kube-apiserver audit log (audit.k8s.io/v1 Event JSON lines; gzip is detected), - for stdin; repeatable")
	f.StringArrayVar(&o.requestLists, "requests", nil, "recorded request list (JSON lines, see docs/replay.md), - for stdin; repeatable")
	f.StringSliceVarP(&o.proposed, "filename", "f", nil, "the proposed configuration: RequestPriority and FlowSchema manifests (file, directory or - for stdin); repeatable or comma-separated, as kubectl's -f")
	f.StringArrayVar(&o.currentPaths, "current-dir", nil, "the current configuration as manifests (file or directory) instead of the live cluster; repeatable")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text, json, yaml or github (annotations for a pull request)")
	f.DurationVar(&o.bucket, "bucket", time.Minute, "time resolution of the seat demand per level")
	f.StringVar(&o.operator, "operator-service-account", "", "the operator's service account, NAMESPACE/NAME, whose requests "+
		"its own native route takes (default: read from the live cluster's route; none with --current-dir)")
	f.StringVar(&o.unmatched, "native-unmatched", string(native.UnmatchedKubeAPIServer),
		"the operator's --native-unmatched: kube-apiserver or operator")
	o.config.Namespace = nil // the APF objects are cluster-scoped: no -n/--namespace
	o.config.AddFlags(f)
	cmdutil.CompleteValues(cmd, "output", outputs...)
	cmdutil.CompleteValues(cmd, "native-unmatched", string(native.UnmatchedKubeAPIServer), string(native.UnmatchedOperator))
	return cmd
}

func (o *options) validate() error {
	stdin := 0
	for _, p := range slices.Concat(o.auditLogs, o.requestLists, o.proposed, o.currentPaths) {
		if p == "-" {
			stdin++
		}
	}
	switch {
	case len(o.auditLogs)+len(o.requestLists) == 0:
		return cmdutil.UsageErrorf("give the requests to replay: --audit-log FILE or --requests FILE")
	case stdin > 1:
		return cmdutil.UsageErrorf("only one input can be - (stdin)")
	case !slices.Contains(outputs, o.output):
		return cmdutil.UsageErrorf("-o %q: want text, json, yaml or github", o.output)
	case o.bucket < time.Millisecond:
		return cmdutil.UsageErrorf("--bucket %s: want at least 1ms", o.bucket)
	}
	if _, err := ParseServiceAccount(o.operator); err != nil {
		return cmdutil.UsageErrorf("--operator-service-account %v", err)
	}
	if _, err := native.ParseUnmatched(o.unmatched); err != nil {
		return cmdutil.UsageErrorf("--native-unmatched: %v", err)
	}
	return nil
}

func (o *options) run(ctx context.Context, streams genericiooptions.IOStreams) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cfgs, err := o.classifiers(ctx, streams.In)
	if err != nil {
		return err
	}
	e := NewEngine(cfgs.current, cfgs.proposed, o.bucket)
	stats, err := Replay(e, inputs(o.auditLogs, o.requestLists), streams.In)
	if err != nil {
		return err
	}
	report, err := e.Report(stats)
	if err != nil {
		return err
	}
	report.NotProjected = append([]NotProjected{}, cfgs.notProjected...) // [] in JSON when none
	if err := o.print(streams.Out, report); err != nil {
		return err
	}
	if n := len(report.NotProjected); n > 0 {
		// As import does for what it leaves out: the report is printed, the exit code says
		// that it is not the whole configuration's.
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf(
			"%d object(s) of the manifests would not be projected onto kube-apiserver and were replayed without (listed in the report)", n)}
	}
	return nil
}

// print writes the report in the chosen format.
func (o *options) print(w io.Writer, report *Report) error {
	switch o.output {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	case "yaml":
		data, err := yaml.Marshal(report) // the JSON field names
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	case "github":
		return report.WriteGitHub(w)
	}
	return report.WriteText(w)
}

// configurations are the current and proposed classifiers (proposed nil without -f), and
// the objects of their manifests that are not projected.
type configurations struct {
	current, proposed Classifier
	notProjected      []NotProjected
}

// classifiers loads the current and proposed configurations.
func (o *options) classifiers(ctx context.Context, stdin io.Reader) (*configurations, error) {
	operator, _ := ParseServiceAccount(o.operator)
	proj := Projection{Operator: operator, Unmatched: native.Unmatched(o.unmatched)}
	out := &configurations{}
	var current nativeview.Objects
	base := nativeview.BootstrapObjects()
	if len(o.currentPaths) > 0 {
		var skipped []NotProjected
		var err error
		if current, skipped, err = LoadProjected(o.currentPaths, stdin, base, proj); err != nil {
			return nil, fmt.Errorf("--current-dir: %w", err)
		}
		out.notProjected = inConfiguration(ConfigurationCurrent, skipped)
	} else {
		var err error
		if current, err = LoadCluster(ctx, o.config); err != nil {
			return nil, fmt.Errorf("reading the current configuration from the cluster (or give --current-dir): %w", err)
		}
		base = current
		if proj.Operator == nil {
			proj.Operator = OperatorRoute(current)
		}
	}
	out.current = NewNativeClassifier(current.FlowSchemas, current.PriorityLevels)
	if len(o.proposed) == 0 {
		return out, nil
	}
	proposed, skipped, err := LoadProjected(o.proposed, stdin, base, proj)
	if err != nil {
		return nil, fmt.Errorf("-f: %w", err)
	}
	out.notProjected = append(out.notProjected, inConfiguration(ConfigurationProposed, skipped)...)
	out.proposed = NewNativeClassifier(proposed.FlowSchemas, proposed.PriorityLevels)
	return out, nil
}

// Input is one log to replay.
type Input struct {
	Name string
	// Recorded is true for a recorded request list, false for an audit log.
	Recorded bool
}

func inputs(auditLogs, recorded []string) []Input {
	var out []Input
	for _, n := range auditLogs {
		out = append(out, Input{Name: n})
	}
	for _, n := range recorded {
		out = append(out, Input{Name: n, Recorded: true})
	}
	return out
}

// batchSize is how many requests the reading goroutine hands over at a time.
const batchSize = 512

// Replay reads the inputs and adds every request to e. Reading and decoding run on one
// goroutine, classification and tallying on the caller's, so that two cores share the work.
func Replay(e *Engine, ins []Input, stdin io.Reader) (audit.Stats, error) {
	batches := make(chan []audit.Request, 4)
	free := make(chan []audit.Request, 6)
	r := audit.NewReader()
	errc := make(chan error, 1)
	go func() {
		defer close(batches)
		errc <- readAll(r, ins, stdin, batches, free)
	}()
	for batch := range batches {
		for i := range batch {
			e.Add(&batch[i])
		}
		select {
		case free <- batch[:0]:
		default:
		}
	}
	err := <-errc
	return r.Stats(), err
}

func readAll(r *audit.Reader, ins []Input, stdin io.Reader, batches chan<- []audit.Request, free chan []audit.Request) error {
	batch := make([]audit.Request, 0, batchSize)
	emit := func(req *audit.Request) {
		batch = append(batch, *req)
		if len(batch) == batchSize {
			batches <- batch
			select {
			case batch = <-free:
			default:
				batch = make([]audit.Request, 0, batchSize)
			}
		}
	}
	var errs []error
	for _, in := range ins {
		errs = append(errs, readOne(r, in, stdin, emit))
	}
	r.Finish(emit)
	if len(batch) > 0 {
		batches <- batch
	}
	return errors.Join(errs...)
}

func readOne(r *audit.Reader, in Input, stdin io.Reader, emit func(*audit.Request)) error {
	f, err := audit.Open(in.Name, stdin)
	if err != nil {
		return err
	}
	if in.Recorded {
		err = r.ReadRecorded(in.Name, f, emit)
	} else {
		err = r.ReadAudit(in.Name, f, emit)
	}
	return errors.Join(err, f.Close())
}
