package webhooks

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/managerbase"
	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

// suite is the shared envtest environment: a real kube-apiserver and etcd with the CRDs and the
// generated webhook configuration of config/webhook installed, and a manager serving the
// webhooks over TLS. It is started by the first test that needs it and stopped by TestMain
// (manager first, then the control plane).
type suite struct {
	env    *envtest.Environment
	cfg    *rest.Config
	scheme *runtime.Scheme
	// admin is a client of the envtest admin user (group system:masters).
	admin client.Client
	// cache is the manager's cache, which the webhooks read.
	cache client.Reader
	// events is the EventRateLimit engine of the events webhook, on the fake clock eventsClock
	// so that refills happen only when a test steps it.
	events      *eventratelimit.Engine
	eventsClock *clocktesting.FakePassiveClock
	cancel      context.CancelFunc
	done        chan error
}

var (
	shared     *suite
	sharedErr  error
	sharedOnce sync.Once
)

func TestMain(m *testing.M) {
	// controller-runtime's components log through its root logger; the tests assert on
	// behaviour, so the logs are dropped instead of being reported as never configured.
	ctrl.SetLogger(logr.Discard())
	code := m.Run()
	if shared != nil {
		if err := shared.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "Stopping the envtest suite:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// envSuite returns the shared suite, starting it on first use; it fails the test (never skips)
// when envtest cannot start, for example when its binaries are missing.
func envSuite(t *testing.T) *suite {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = startSuite() })
	if sharedErr != nil {
		t.Fatalf("Starting envtest: %v", sharedErr)
	}
	return shared
}

func startSuite() (*suite, error) {
	env, err := envtestutil.NewEnvironment()
	if err != nil {
		return nil, err
	}
	env.WebhookInstallOptions = envtest.WebhookInstallOptions{Paths: []string{envtestutil.WebhookDir()}}
	cfg, err := env.Start()
	if err != nil {
		return nil, err
	}
	s := &suite{env: env, cfg: cfg, scheme: runtime.NewScheme(), done: make(chan error, 1)}
	if err := s.startManager(); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return s, nil
}

// startManager runs a manager with the field indexes and both webhooks, and waits until the
// webhook server answers and the cache has synced.
func (s *suite) startManager() error {
	if err := clientgoscheme.AddToScheme(s.scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(s.scheme); err != nil {
		return err
	}
	wo := s.env.WebhookInstallOptions
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	mgr, err := managerbase.New(ctx, s.cfg, ctrl.Options{
		Scheme:  s.scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir,
		}),
	})
	if err != nil {
		return err
	}
	s.eventsClock = clocktesting.NewFakePassiveClock(time.Now())
	s.events = eventratelimit.New(s.eventsClock, nil)
	if err := SetupWithManager(mgr, Options{NativeWarnings: true, EventRateLimit: s.events,
		NativeShareBudget: true, NativeMaxSeatLossPercent: suiteMaxSeatLossPercent,
		ExemptGroups: []string{"system:masters", suiteExemptGroup}}); err != nil {
		return err
	}
	go func() { s.done <- mgr.Start(ctx) }()
	if s.admin, err = client.New(s.cfg, client.Options{Scheme: s.scheme}); err != nil {
		return err
	}
	s.cache = mgr.GetCache()
	return harness.WaitServing(ctx, mgr)
}

// stop cancels the manager, waits for it to return, then stops the control plane.
func (s *suite) stop() error {
	s.cancel()
	if err := <-s.done; err != nil {
		_ = s.env.Stop()
		return fmt.Errorf("manager: %w", err)
	}
	return s.env.Stop()
}
