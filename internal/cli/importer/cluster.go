package importer

import (
	"context"
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// loadCluster lists the native PriorityLevelConfiguration and FlowSchema objects of the live
// cluster at v1.
func loadCluster(ctx context.Context, getter genericclioptions.RESTClientGetter) (*Input, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	s := runtime.NewScheme()
	if err := flowcontrolv1.AddToScheme(s); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, err
	}
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	var fss flowcontrolv1.FlowSchemaList
	if err := c.List(ctx, &plcs); err != nil {
		return nil, fmt.Errorf("listing PriorityLevelConfiguration objects (needs list on "+
			"prioritylevelconfigurations.flowcontrol.apiserver.k8s.io): %w", err)
	}
	if err := c.List(ctx, &fss); err != nil {
		return nil, fmt.Errorf("listing FlowSchema objects (needs list on flowschemas.flowcontrol.apiserver.k8s.io): %w", err)
	}
	return &Input{PriorityLevels: plcs.Items, FlowSchemas: fss.Items}, nil
}
