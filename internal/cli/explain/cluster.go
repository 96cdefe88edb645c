package explain

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/client/config"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// loadCluster lists the RequestPriority and FlowSchema objects of the live cluster.
func loadCluster(ctx context.Context, kubeconfig, kubeContext string) ([]flowv1.RequestPriority, []flowv1.FlowSchema, error) {
	cfg, err := restConfig(kubeconfig, kubeContext)
	if err != nil {
		return nil, nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	s := runtime.NewScheme()
	if err := flowv1.AddToScheme(s); err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, nil, err
	}
	var rps flowv1.RequestPriorityList
	var fss flowv1.FlowSchemaList
	if err := c.List(ctx, &rps); err != nil {
		return nil, nil, fmt.Errorf("listing RequestPriority objects: %w", err)
	}
	if err := c.List(ctx, &fss); err != nil {
		return nil, nil, fmt.Errorf("listing FlowSchema objects: %w", err)
	}
	return rps.Items, fss.Items, nil
}

// restConfig loads the client configuration as kubectl does: an explicit --kubeconfig file
// (with --context if given), or else controller-runtime's search ($KUBECONFIG, in-cluster,
// ~/.kube/config) in the given context.
func restConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	}
	return ctrlconfig.GetConfigWithContext(kubeContext)
}
