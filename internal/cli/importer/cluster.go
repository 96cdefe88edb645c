package importer

import (
	"context"
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// loadCluster lists the native PriorityLevelConfiguration and FlowSchema objects of the live
// cluster at v1 (nativeview.List).
func loadCluster(ctx context.Context, getter genericclioptions.RESTClientGetter) (*Input, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	objs, err := nativeview.List(ctx, cs)
	if err != nil {
		return nil, err
	}
	return &Input{PriorityLevels: objs.PriorityLevels, FlowSchemas: objs.FlowSchemas}, nil
}
