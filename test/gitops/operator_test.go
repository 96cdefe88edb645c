package gitops_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/apf-operator/apf-operator/controllers"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/index"
)

// startOperator runs every reconciler in-process, as the manager does (no default objects, no
// webhook server), with the given enforcement (controllers.EnforcementNative or
// EnforcementNone), until the returned function is called or the test ends. engine nil means
// the events webhook is off.
func startOperator(t *testing.T, enforcement string, engine *eventratelimit.Engine) (stop func()) {
	t.Helper()
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 testScheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := index.Register(ctx, mgr.GetFieldIndexer()); err != nil {
		t.Fatal(err)
	}
	// The suite's tests share one control plane and leave their levels behind: the share
	// budget (docs/enforcement.md) is not what they check, so it is wide.
	roomy := int32(90)
	opts := controllers.Options{Enforcement: enforcement, Registerer: prometheus.NewRegistry(),
		EventRateLimit: engine, NativeMaxSeatLossPercent: &roomy}
	if err := controllers.SetupWithManager(mgr, opts); err != nil {
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
