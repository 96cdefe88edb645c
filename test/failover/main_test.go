// Package failover tests the operator as the chart runs it — two replicas with leader election —
// and under faults: the real apf-operator binary as separate processes against a real
// kube-apiserver and etcd (envtest). A leader killed with SIGKILL is replaced within the lease
// duration while both replicas keep serving admission; a replica killed while it creates the
// defaults converges on restart; kube-apiserver restarted on the same etcd converges; with the
// webhook down the CRD's CEL rules still hold and status reports the rest.
package failover

import (
	"context"
	"strconv"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/test/harness"
)

var (
	cluster *harness.Cluster
	k8s     client.Client
	binary  string
	// front stands where the chart's webhook Service stands: the webhook configuration points
	// at it and it spreads connections over the replicas.
	front *balancer
	// metricsToken is a bearer token allowed to read the replicas' /metrics.
	metricsToken string
)

var suite = &harness.Suite{
	Name:         "failover",
	ControlPlane: &harness.ControlPlane{},
	NeedsBinary:  true,
	Ready:        startFront,
}

func TestMain(m *testing.M) { harness.Main(m, suite) }

// startFront starts the balancer in front of the replicas and makes the metrics token.
func startFront(s *harness.Suite) (err error) {
	cluster, k8s, binary = s.Cluster, s.Client, s.Binary
	// The webhook configuration envtest installed calls this port; the replicas listen elsewhere.
	addr := "127.0.0.1:" + strconv.Itoa(cluster.Env.WebhookInstallOptions.LocalServingPort)
	if front, err = startBalancer(addr); err != nil {
		return err
	}
	s.AddCleanup(func() error { front.Close(); return nil })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	metricsToken, err = harness.MetricsReaderToken(ctx, cluster.Config, namespace, metricsReader, time.Hour)
	return err
}
