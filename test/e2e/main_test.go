// Package e2e runs the user's journey end to end: the real apf-operator binary as its own
// process against a real kube-apiserver (envtest), webhooks served over TLS and registered by
// URL, kubectl and helm built by hack/. It needs no cluster and no Docker engine.
package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/test/harness"
)

var (
	cluster  *harness.Cluster
	k8s      client.Client
	operator *harness.Operator
	binary   string
)

func TestMain(m *testing.M) {
	code, err := setUp(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e set-up failed:", err)
		code = 1
	}
	os.Exit(code)
}

func setUp(m *testing.M) (code int, err error) {
	dir, err := os.MkdirTemp("", "apf-e2e-bin-")
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
	if metricsAddr, err = harness.FreeAddr(); err != nil {
		return 1, err
	}
	if operator, err = startOperator(); err != nil {
		return 1, err
	}
	defer func() {
		if stopErr := operator.Stop(20 * time.Second); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	code = m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "operator log:\n%s\n", operator.ReadLog())
	}
	return code, nil
}

func startOperator() (*harness.Operator, error) {
	return cluster.StartOperator(binary, cluster.OperatorArgs(metricsAddr)...)
}

// metricsAddr is where the operator serves metrics in these tests: a free port, chosen once.
var metricsAddr string

// eventually polls cond until it returns true or the timeout passes.
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
