// Package top is `apf-operator top` (and `kubectl apf top`): a live view of one cluster's API
// Priority and Fairness, per native priority level and FlowSchema, mapped back to the
// operator's RequestPriority and FlowSchema objects, with the flows that are queued now. It
// reads kube-apiserver's /metrics twice (rates need two samples) and its
// /debug/api_priority_and_fairness/dump_requests table, through kubectl's configuration.
package top

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
)

// options are top's flags.
type options struct {
	interval time.Duration
	watch    bool
	once     bool
	output   string
	limit    int
	// replicaServers are kube-apiserver replicas' URLs, read directly and summed.
	replicaServers []string
}

// NewCommand returns `top`.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	o := options{}
	kube := genericclioptions.NewConfigFlags(true)
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Show what kube-apiserver's flow control is throttling now",
		Long: `top reads kube-apiserver's /metrics twice, --interval apart, and its
/debug/api_priority_and_fairness/dump_requests table, and shows per priority level and per
FlowSchema (mapped to the operator's RequestPriority and FlowSchema objects): seats, queued
requests, dispatched and rejected requests per second (by reason) and the 99th percentile of the
queue wait, then the flows queued now. Behind a Service, the view is of the one kube-apiserver
replica that answered; top says how many replicas the cluster has, and --replica-servers reads
each replica directly and sums their counts.

It refreshes until interrupted on a terminal (--watch); --once prints one view and exits (the
default when the output is not a terminal or is -o json|yaml).`,
		Example: `  kubectl apf top
  kubectl apf top --once -o json --interval 5s
  apf-operator top --context prod --watch
  kubectl apf top --replica-servers https://10.0.0.11:6443,https://10.0.0.12:6443,https://10.0.0.13:6443`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			cfg, err := kube.ToRESTConfig()
			if err != nil {
				return err
			}
			srcs, err := o.sources(cfg)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt)
			defer stop()
			return o.run(ctx, srcs, streams.Out, o.watching(streams.Out))
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.interval, "interval", 2*time.Second, "time between the two reads of /metrics that rates are computed over (and between refreshes)")
	f.BoolVar(&o.watch, "watch", false, "refresh until interrupted (the default on a terminal with the table output)")
	f.BoolVar(&o.once, "once", false, "print one view and exit")
	f.StringVarP(&o.output, "output", "o", "", "output format: json or yaml (default: a table that fits 120 columns)")
	f.IntVar(&o.limit, "limit", 10, "rows of FlowSchemas and flows in the table (-o json|yaml shows all)")
	f.StringSliceVar(&o.replicaServers, "replica-servers", nil, "URLs of kube-apiserver replicas (https://host:port, comma-separated or repeated) "+
		"to read each directly, with the kubeconfig's credentials, and sum; by default the view is of the one replica the kubeconfig's server reaches")
	kube.Namespace = nil // the APF objects are cluster-scoped: no -n/--namespace
	kube.AddFlags(f)
	cmdutil.CompleteValues(cmd, "output", "json", "yaml")
	return cmd
}

func (o *options) validate() error {
	switch {
	case o.output != "" && o.output != "json" && o.output != "yaml":
		return cmdutil.UsageErrorf("--output %q: use json or yaml, or leave it out for the table", o.output)
	case o.watch && o.once:
		return cmdutil.UsageErrorf("--watch and --once exclude each other")
	case o.interval < 100*time.Millisecond:
		return cmdutil.UsageErrorf("--interval %s: use at least 100ms (rates need two reads apart)", o.interval)
	case o.limit < 1:
		return cmdutil.UsageErrorf("--limit %d: use at least 1", o.limit)
	}
	return nil
}

// watching decides between one view and refreshing: the flags, else refresh only for a
// table on a terminal.
func (o *options) watching(out io.Writer) bool {
	if o.watch || o.once {
		return o.watch
	}
	f, ok := out.(*os.File)
	return ok && o.output == "" && term.IsTerminal(int(f.Fd()))
}

// sources are the kube-apiserver replicas to read: each of --replica-servers (the
// kubeconfig's credentials, another host), else the kubeconfig's server.
func (o *options) sources(cfg *rest.Config) ([]source, error) {
	if len(o.replicaServers) == 0 {
		src, err := newClusterSource(cfg)
		return []source{src}, err
	}
	srcs := make([]source, 0, len(o.replicaServers))
	for _, server := range o.replicaServers {
		u, err := url.Parse(server)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, cmdutil.UsageErrorf("--replica-servers %q: use https://host:port", server)
		}
		replica := rest.CopyConfig(cfg)
		replica.Host = server
		src, err := newClusterSource(replica)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, src)
	}
	return srcs, nil
}

// run samples, prints, and with watch keeps refreshing until ctx ends.
func (o *options) run(ctx context.Context, srcs []source, out io.Writer, watch bool) error {
	prev, err := readSnapshot(ctx, srcs)
	if err != nil {
		return err
	}
	for first := true; ; first = false {
		select {
		case <-ctx.Done():
			if watch && !first {
				return nil
			}
			return ctx.Err()
		case <-time.After(o.interval):
		}
		cur, err := readSnapshot(ctx, srcs)
		if err != nil {
			return err
		}
		report := collect(ctx, srcs, prev, cur)
		if err := o.print(out, report, watch && !first); err != nil {
			return err
		}
		if !watch {
			return nil
		}
		prev = cur
	}
}

// print writes one view; again marks a refresh (the table clears the screen first).
func (o *options) print(out io.Writer, r *Report, again bool) error {
	switch o.output {
	case "json":
		return writeJSON(out, r)
	case "yaml":
		if again {
			if _, err := io.WriteString(out, "---\n"); err != nil {
				return err
			}
		}
		return writeYAML(out, r)
	}
	if again {
		fmt.Fprint(out, "\033[H\033[2J")
	}
	return writeTable(out, r, o.limit)
}
