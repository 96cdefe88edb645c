// Package prune implements `apf-operator prune-native`: it deletes the native
// flowcontrol.apiserver.k8s.io/v1 FlowSchema and PriorityLevelConfiguration objects the
// operator projected (label app.kubernetes.io/managed-by=apf-operator and a
// flowcontrol.apf-operator.io/source annotation), so that kube-apiserver stops enforcing a
// configuration nobody manages any more. The Helm chart runs it as a pre-delete hook; it is
// also the way back after switching --enforcement to none. Objects the operator does not own
// are never touched.
package prune

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
)

// Run runs the command with its arguments and returns the exit code: 0 when every owned
// native object is gone, 1 when a deletion failed, 2 on a usage error.
func Run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("apf-operator prune-native", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "Path of a kubeconfig file; empty: $KUBECONFIG, the in-cluster config, then ~/.kube/config.")
	dryRun := fs.Bool("dry-run", false, "List what would be deleted, delete nothing.")
	timeout := fs.Duration("timeout", time.Minute, "Give up after this long.")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: apf-operator prune-native [--kubeconfig PATH] [--dry-run]\n\n"+
			"Deletes the native FlowSchema and PriorityLevelConfiguration objects the operator projected.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	c, err := newClient(*kubeconfig)
	if err != nil {
		fmt.Fprintln(stderr, "apf-operator prune-native:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := Prune(ctx, c, *dryRun, stdout); err != nil {
		fmt.Fprintln(stderr, "apf-operator prune-native:", err)
		return 1
	}
	return 0
}

func newClient(kubeconfig string) (client.Client, error) {
	cfg, err := ctrl.GetConfig()
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	s := runtime.NewScheme()
	if err := flowcontrolv1.AddToScheme(s); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: s})
}

// Prune deletes the owned native objects, FlowSchemas first so that none is left referring to
// a deleted level, and writes one line per object to out.
func Prune(ctx context.Context, c client.Client, dryRun bool, out io.Writer) error {
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
	return nil
}

func pruneOne(ctx context.Context, c client.Client, obj client.Object, dryRun bool, out io.Writer) error {
	kind := native.KindOf(obj)
	if !native.Owned(obj) {
		return nil // labelled by someone else, without the operator's source annotation
	}
	verb := "deleted"
	if dryRun {
		verb = "would delete"
	} else if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s: %w", kind, obj.GetName(), err)
	}
	fmt.Fprintf(out, "%s %s %s (from %s)\n", verb, kind, obj.GetName(), obj.GetAnnotations()[flowv1.AnnotationSource])
	return nil
}
