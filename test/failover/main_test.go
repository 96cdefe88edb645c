// Package failover tests the operator as the chart runs it — two replicas with leader election —
// and under faults: the real apf-operator binary as separate processes against a real
// kube-apiserver and etcd (envtest). A leader killed with SIGKILL is replaced within the lease
// duration while both replicas keep serving admission; a replica killed while it creates the
// defaults converges on restart; kube-apiserver restarted on the same etcd converges; with the
// webhook down the CRD's CEL rules still hold and status reports the rest.
package failover

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

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

func TestMain(m *testing.M) {
	code, err := setUp(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "failover set-up failed:", err)
		code = 1
	}
	os.Exit(code)
}

func setUp(m *testing.M) (code int, err error) {
	ctrllog.SetLogger(logr.Discard()) // the test's own clients; the replicas log to files
	dir, err := os.MkdirTemp("", "apf-failover-bin-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	if binary, err = harness.BuildOperator(dir); err != nil {
		return 1, err
	}
	if cluster, err = harness.Start(); err != nil {
		return 1, err
	}
	defer func() {
		if stopErr := cluster.Stop(); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	if k8s, err = cluster.Client(); err != nil {
		return 1, err
	}
	// The webhook configuration envtest installed calls this port; the replicas listen elsewhere.
	addr := "127.0.0.1:" + strconv.Itoa(cluster.Env.WebhookInstallOptions.LocalServingPort)
	if front, err = startBalancer(addr); err != nil {
		return 1, err
	}
	defer front.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if metricsToken, err = harness.MetricsReaderToken(ctx, cluster.Config, namespace, metricsReader, time.Hour); err != nil {
		return 1, err
	}
	return m.Run(), nil
}

// eventually polls cond every 100 ms until it returns true or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		ok, err := cond(ctx)
		if ok && err == nil {
			return
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, lastErr)
}
