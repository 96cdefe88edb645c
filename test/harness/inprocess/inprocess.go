// Package inprocess runs the operator inside a test's own process through internal/operator,
// the production wiring, for the suites that need its in-memory state (test/donoharm,
// test/gitops). It is apart from package harness, which packages that internal/operator
// imports (webhooks) use in their tests: harness importing internal/operator would be a cycle.
package inprocess

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/apf-operator/apf-operator/internal/operator"
)

// Options returns production's operator options (operator.NewOptions) as the suites
// that run the operator in their own process need them: no leader election, no webhooks, no
// metrics or health endpoints, a registry of its own, and controller names that may repeat
// (one test process starts the operator many times).
func Options() operator.Options {
	o := operator.NewOptions()
	o.LeaderElection.Enabled, o.Webhooks.Enabled = false, false
	o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0"
	o.Testing.Registerer, o.Testing.SkipNameValidation = prometheus.NewRegistry(), true
	return o
}

// Start runs the operator through internal/operator (the production wiring) against
// cfg with opts, waits up to a minute for its cache to sync, and returns the manager and a
// function that stops it (also run at the test's cleanup). An error from the manager other
// than the cancellation fails the test.
func Start(t testing.TB, cfg *rest.Config, opts operator.Options) (manager.Manager, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := operator.New(ctx, cfg, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("operator stopped with %v", err)
		}
	}
	t.Cleanup(stop)
	syncCtx, syncCancel := context.WithTimeout(ctx, time.Minute)
	defer syncCancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		t.Fatal("the operator's cache did not sync within a minute")
	}
	return mgr, stop
}
