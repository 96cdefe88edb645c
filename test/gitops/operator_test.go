package gitops_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/operator"
)

// startOperator runs the operator in-process as production wires it (internal/operator), with
// no default objects, no webhook server and no leader election, with the given enforcement
// (controllers.EnforcementNative or EnforcementNone), until the returned function is called or
// the test ends. engine, when set, is the events webhook's engine the EventRateLimit objects
// configure; nil means the events webhook is off.
func startOperator(t *testing.T, enforcement string, engine *eventratelimit.Engine) (stop func()) {
	t.Helper()
	o := operator.NewOptions()
	o.LeaderElection.Enabled, o.Webhooks.Enabled, o.ManageDefaults = false, false, false
	o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0"
	o.Enforcement = enforcement
	// The suite's tests share one control plane and leave their levels behind: the share
	// budget (docs/enforcement.md) is not what they check, so it is wide.
	o.NativeMaxSeatLossPercent = 90
	o.Testing.Registerer, o.Testing.SkipNameValidation = prometheus.NewRegistry(), true
	o.Testing.EventRateLimitEngine = engine
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := operator.New(ctx, restConfig, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
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
	return stop
}
