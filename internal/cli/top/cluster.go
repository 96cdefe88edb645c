package top

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/cli/cmdutil"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// identityLabel marks the Leases in kube-system by which each kube-apiserver replica
// announces itself (kube-apiserver's identity leases, one per replica).
const identityLabel = "apiserver.kubernetes.io/identity=kube-apiserver"

// source is what top reads from a cluster; tests replace it.
type source interface {
	// get reads a non-resource path of the API server (through the Service: one replica).
	get(ctx context.Context, path string) ([]byte, error)
	// owners maps native objects to the operator's objects.
	owners(ctx context.Context) (Owners, error)
	// replicas counts kube-apiserver replicas.
	replicas(ctx context.Context) (int, error)
	// server is the address requests go to.
	server() string
}

// clusterSource reads through a REST config from kubectl's flags.
type clusterSource struct {
	host   string
	client kubernetes.Interface
	raw    rest.Interface
}

func newClusterSource(cfg *rest.Config) (*clusterSource, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clusterSource{host: cfg.Host, client: client, raw: client.Discovery().RESTClient()}, nil
}

func (c *clusterSource) server() string { return c.host }

func (c *clusterSource) get(ctx context.Context, path string) ([]byte, error) {
	raw, err := cmdutil.RawGet(ctx, c.raw, path)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w (top needs get on nonResourceURLs /metrics and /debug/api_priority_and_fairness/*)", path, err)
	}
	return raw, nil
}

func (c *clusterSource) owners(ctx context.Context) (Owners, error) {
	out := Owners{Levels: map[string]string{}, Schemas: map[string]string{}}
	objs, err := nativeview.List(ctx, c.client)
	if err != nil {
		return out, err
	}
	for i := range objs.PriorityLevels {
		if native.Owned(&objs.PriorityLevels[i]) {
			out.Levels[objs.PriorityLevels[i].Name] = objs.PriorityLevels[i].Annotations[flowv1.AnnotationSource]
		}
	}
	for i := range objs.FlowSchemas {
		if native.Owned(&objs.FlowSchemas[i]) {
			out.Schemas[objs.FlowSchemas[i].Name] = objs.FlowSchemas[i].Annotations[flowv1.AnnotationSource]
		}
	}
	return out, nil
}

// replicas counts kube-apiserver's identity Leases, else the endpoints of the default
// namespace's kubernetes Service (its EndpointSlices, which kube-apiserver maintains).
func (c *clusterSource) replicas(ctx context.Context) (int, error) {
	leases, err := c.client.CoordinationV1().Leases("kube-system").List(ctx, metav1.ListOptions{LabelSelector: identityLabel})
	if err == nil && len(leases.Items) > 0 {
		return len(leases.Items), nil
	}
	slices, sliceErr := c.client.DiscoveryV1().EndpointSlices("default").List(ctx,
		metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"})
	if sliceErr != nil {
		return 0, cmp.Or(err, sliceErr)
	}
	n := 0
	for _, slice := range slices.Items {
		n += len(slice.Endpoints)
	}
	if n == 0 {
		return 0, cmp.Or(err, errors.New("no identity Leases and no endpoints of Service default/kubernetes"))
	}
	return n, nil
}
