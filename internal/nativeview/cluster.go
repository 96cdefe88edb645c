package nativeview

import (
	"context"
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// OriginCluster is the Origin of a view read from a cluster.
const OriginCluster = "the live cluster's FlowSchemas and priority levels"

// Objects are native flowcontrol.apiserver.k8s.io/v1 objects, as a cluster or kube-apiserver's
// bootstrap configuration holds them.
type Objects struct {
	FlowSchemas    []flowcontrolv1.FlowSchema
	PriorityLevels []flowcontrolv1.PriorityLevelConfiguration
}

// List lists every native FlowSchema and PriorityLevelConfiguration of the cluster, at v1.
func List(ctx context.Context, cs kubernetes.Interface) (Objects, error) {
	levels, err := ListPriorityLevels(ctx, cs)
	if err != nil {
		return Objects{}, err
	}
	schemas, err := cs.FlowcontrolV1().FlowSchemas().List(ctx, metav1.ListOptions{})
	if err != nil {
		return Objects{}, fmt.Errorf("listing FlowSchemas (flowcontrol.apiserver.k8s.io/v1; needs list on "+
			"flowschemas.flowcontrol.apiserver.k8s.io): %w", err)
	}
	return Objects{FlowSchemas: schemas.Items, PriorityLevels: levels}, nil
}

// ListPriorityLevels lists every native PriorityLevelConfiguration of the cluster, at v1.
func ListPriorityLevels(ctx context.Context, cs kubernetes.Interface) ([]flowcontrolv1.PriorityLevelConfiguration, error) {
	levels, err := cs.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing PriorityLevelConfigurations (flowcontrol.apiserver.k8s.io/v1; needs list on "+
			"prioritylevelconfigurations.flowcontrol.apiserver.k8s.io): %w", err)
	}
	return levels.Items, nil
}

// FromCluster reads every native FlowSchema and PriorityLevelConfiguration of the cluster
// (kube-apiserver's own, whatever its version, provider-added ones, and the operator's), and
// the seats kube-apiserver reports on /metrics (WithMetrics). Listing the objects must succeed;
// /metrics is optional (a user may not read it): SeatsError then says why seats are unknown.
func FromCluster(ctx context.Context, cs kubernetes.Interface) (*View, error) {
	objs, err := List(ctx, cs)
	if err != nil {
		return nil, err
	}
	v := New(OriginCluster, objs.FlowSchemas, objs.PriorityLevels, 0)
	rc := cs.Discovery().RESTClient()
	if rc == nil {
		v.SeatsError = fmt.Errorf("no REST client to read kube-apiserver's /metrics")
		return v, nil
	}
	body, err := apfmetrics.Fetch(ctx, rc.Get().AbsPath(apfmetrics.MetricsPath), apfmetrics.MetricsPath)
	if err != nil {
		v.SeatsError = fmt.Errorf("reading kube-apiserver's /metrics: %w", err)
		return v, nil
	}
	return v.WithMetrics(body), nil
}
