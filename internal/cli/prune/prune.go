// Package prune implements `apf-operator prune-native`: it deletes the native
// flowcontrol.apiserver.k8s.io/v1 FlowSchema and PriorityLevelConfiguration objects the
// operator projected (label app.kubernetes.io/managed-by=apf-operator and a
// flowcontrol.apf-operator.io/source annotation), so that kube-apiserver stops enforcing a
// configuration nobody manages any more, and gives the levels it carved shares from
// (spec.sharesFrom) back their recorded shares and autoupdate-spec annotation. The Helm chart
// runs it as a post-delete hook; it is also the way back after switching --enforcement to
// none. No other object the operator does not own is touched.
package prune

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	"github.com/apf-operator/apf-operator/internal/native"
)

// NewCommand returns `prune-native`. It exits 0 when every owned native object is gone, 1 when
// a deletion failed, 2 on a usage error.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	config := genericclioptions.NewConfigFlags(true)
	var dryRun string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "prune-native [--dry-run=none|client|server] [--kubeconfig PATH]",
		Short: "Delete the native flow control objects the operator projected (helm uninstall runs it)",
		Long: `Deletes the native FlowSchema and PriorityLevelConfiguration objects the operator projected
(label app.kubernetes.io/managed-by=apf-operator and a flowcontrol.apf-operator.io/source
annotation), FlowSchemas first, so that kube-apiserver stops enforcing a configuration nobody
manages any more. Then it gives the levels RequestPriorities carved shares from (spec.sharesFrom)
back the shares and apf.kubernetes.io/autoupdate-spec annotation recorded on them. No other
object the operator does not own is touched. The chart's post-delete hook runs it in the cluster
(in-cluster config); it is also the way back after switching the manager to --enforcement=none.`,
		Example: `  # What would be deleted in the cluster of the current context
  apf-operator prune-native --dry-run=client

  # The same, with kube-apiserver admitting each deletion without persisting it
  apf-operator prune-native --dry-run=server`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			mode, err := ParseDryRun(dryRun)
			if err != nil {
				return err
			}
			k8s, err := newClient(config)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			return Prune(ctx, k8s, mode, streams.Out)
		},
	}
	cmd.Flags().StringVar(&dryRun, "dry-run", string(DryRunNone), `Must be "none", "server", or "client", as kubectl's: `+
		`client lists what would be deleted and sends nothing; server sends each deletion as a dry run, which `+
		`kube-apiserver admits without persisting. A bare --dry-run is client.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = string(DryRunClient)
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "Give up after this long.")
	config.Namespace = nil // the objects are cluster-scoped: no -n/--namespace
	config.AddFlags(cmd.Flags())
	cmdutil.CompleteValues(cmd, "dry-run", string(DryRunNone), string(DryRunClient), string(DryRunServer))
	return cmd
}

// Run executes `apf-operator prune-native` with args and returns the exit code, printing errors
// as the apf-operator binary does.
func Run(args []string, stdout, stderr io.Writer) int {
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: stdout, ErrOut: stderr}
	root := &cobra.Command{Use: "apf-operator"}
	root.AddCommand(NewCommand(streams))
	return cmdutil.Execute(root, append([]string{"prune-native"}, args...), streams)
}

// newClient connects with the kubeconfig flags: $KUBECONFIG or ~/.kube/config, else the
// in-cluster config (the chart's hook Job).
func newClient(config genericclioptions.RESTClientGetter) (client.Client, error) {
	cfg, err := config.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	s := runtime.NewScheme()
	if err := flowcontrolv1.AddToScheme(s); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: s})
}

// DryRun is --dry-run's strategy, as kubectl's.
type DryRun string

// The strategies of --dry-run.
const (
	// DryRunNone deletes.
	DryRunNone DryRun = "none"
	// DryRunClient lists what would be deleted and sends no deletion.
	DryRunClient DryRun = "client"
	// DryRunServer sends each deletion with dryRun=All: kube-apiserver admits it and persists nothing.
	DryRunServer DryRun = "server"
)

// ParseDryRun reads --dry-run; a wrong value is a usage error in kubectl's words.
func ParseDryRun(s string) (DryRun, error) {
	switch d := DryRun(s); d {
	case DryRunNone, DryRunClient, DryRunServer:
		return d, nil
	}
	return "", cmdutil.UsageErrorf(`invalid dry-run value (%s). Must be "none", "server", or "client"`, s)
}

// Prune deletes the owned native objects, FlowSchemas first so that none is left referring to
// a deleted level, then restores the levels the operator carved shares from (donors.go), and
// writes one line per object to out, as dryRun says.
func Prune(ctx context.Context, c client.Client, dryRun DryRun, out io.Writer) error {
	owned := client.MatchingLabels{flowv1.LabelManagedBy: flowv1.ManagedByValue}
	var fss flowcontrolv1.FlowSchemaList
	if err := c.List(ctx, &fss, owned); err != nil {
		return fmt.Errorf("listing native FlowSchemas: %w", err)
	}
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err := c.List(ctx, &plcs, owned); err != nil {
		return fmt.Errorf("listing native PriorityLevelConfigurations: %w", err)
	}
	var objs []client.Object
	for i := range fss.Items {
		objs = append(objs, &fss.Items[i])
	}
	for i := range plcs.Items {
		objs = append(objs, &plcs.Items[i])
	}
	for _, obj := range objs {
		if err := pruneOne(ctx, c, obj, dryRun, out); err != nil {
			return err
		}
	}
	return restoreDonors(ctx, c, dryRun, out)
}

// pruneOne deletes one object the operator owns (or not, as dryRun says) and writes its line.
func pruneOne(ctx context.Context, c client.Client, obj client.Object, dryRun DryRun, out io.Writer) error {
	kind := native.KindOf(obj)
	if !native.Deletable(obj) {
		return nil // not the operator's: no source annotation, or a name the projection never gives
	}
	verb := "deleted"
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	// Only the object as listed: one re-created or changed since is left alone.
	opts := []client.DeleteOption{client.Preconditions{UID: &uid, ResourceVersion: &rv}}
	switch dryRun {
	case DryRunClient:
		fmt.Fprintf(out, "would delete %s %s (from %s)\n", kind, obj.GetName(), obj.GetAnnotations()[flowv1.AnnotationSource])
		return nil
	case DryRunServer:
		verb, opts = "deleted (server dry run)", append(opts, client.DryRunAll)
	}
	if err := c.Delete(ctx, obj, opts...); apierrors.IsConflict(err) {
		fmt.Fprintf(out, "skipped %s %s: changed since it was listed\n", kind, obj.GetName())
		return nil
	} else if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s: %w", kind, obj.GetName(), err)
	}
	fmt.Fprintf(out, "%s %s %s (from %s)\n", verb, kind, obj.GetName(), obj.GetAnnotations()[flowv1.AnnotationSource])
	return nil
}
