package nativeview

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// OriginCluster is the Origin of a view read from a cluster.
const OriginCluster = "the live cluster's FlowSchemas and priority levels"

// FromCluster reads every native FlowSchema and PriorityLevelConfiguration of the cluster
// (kube-apiserver's own, whatever its version, provider-added ones, and the operator's), and
// the nominal seats kube-apiserver reports on /metrics (apiserver_flowcontrol_nominal_limit_seats),
// from which it derives the server's concurrency limit. Listing the objects must succeed;
// /metrics is optional (a user may not read it): SeatsError then says why seats are unknown.
func FromCluster(ctx context.Context, cs kubernetes.Interface) (*View, error) {
	schemas, err := cs.FlowcontrolV1().FlowSchemas().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing FlowSchemas (flowcontrol.apiserver.k8s.io/v1): %w", err)
	}
	levels, err := cs.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing PriorityLevelConfigurations (flowcontrol.apiserver.k8s.io/v1): %w", err)
	}
	v := New(OriginCluster, schemas.Items, levels.Items, 0)
	rc := cs.Discovery().RESTClient()
	if rc == nil {
		v.SeatsError = fmt.Errorf("no REST client to read kube-apiserver's /metrics")
		return v, nil
	}
	body, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		v.SeatsError = fmt.Errorf("reading kube-apiserver's /metrics: %w", err)
		return v, nil
	}
	v.levelSeats = parseNominalSeats(body)
	if v.serverSeats = serverSeatsFrom(v.levels, v.levelSeats, v.shareSum); v.serverSeats == 0 {
		v.SeatsError = fmt.Errorf("kube-apiserver's /metrics has no apiserver_flowcontrol_nominal_limit_seats " +
			"consistent with the levels listed (a configuration change in between?)")
	}
	return v, nil
}
