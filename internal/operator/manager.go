package operator

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/apf-operator/apf-operator/controllers"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/managerbase"
	"github.com/apf-operator/apf-operator/webhooks"
)

// Run builds the operator for cfg with New and runs it until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	mgr, err := New(ctx, cfg, o)
	if err != nil {
		return err
	}
	ctrl.Log.WithName("setup").Info("Starting the manager", "leaderElection", o.LeaderElection.Enabled,
		"webhooks", o.Webhooks.Enabled, "manageDefaults", o.ManageDefaults, "enforcement", o.Enforcement,
		"nativeUnmatched", o.NativeUnmatched)
	return mgr.Start(ctx)
}

// New validates o and builds the operator's manager for cfg: managerbase.New's manager (scheme,
// cache transform, indexes; ctx bounds the indexes' registration) with every reconciler, the
// health checks and, with Webhooks.Enabled, the validating webhooks and their certificate
// rotation. The caller starts it.
func New(ctx context.Context, cfg *rest.Config, o Options) (manager.Manager, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	mgrOpts, err := o.managerOptions()
	if err != nil {
		return nil, err
	}
	mgr, err := managerbase.New(ctx, cfg, mgrOpts)
	if err != nil {
		return nil, err
	}
	events, err := o.eventRateLimitEngine()
	if err != nil {
		return nil, err
	}
	if err := controllers.SetupWithManager(mgr, o.controllerOptions(events)); err != nil {
		return nil, fmt.Errorf("setting up the reconcilers: %w", err)
	}
	if err := addHealthChecks(mgr); err != nil {
		return nil, err
	}
	if o.Webhooks.Enabled {
		if err := setupWebhooks(mgr, &o, events); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// disableHTTP2 serves HTTP/1.1 only (CVE-2023-44487, HTTP/2 rapid reset).
func disableHTTP2(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }

// managerOptions are controller-runtime's options for o: the metrics, probe and pprof
// endpoints, the webhook server, leader election and the test settings.
func (o *Options) managerOptions() (ctrl.Options, error) {
	server, err := o.webhookServer()
	if err != nil {
		return ctrl.Options{}, err
	}
	le := o.LeaderElection
	opts := ctrl.Options{
		Metrics: metricsserver.Options{
			BindAddress:    o.MetricsBindAddress,
			SecureServing:  true,
			FilterProvider: filters.WithAuthenticationAndAuthorization,
			TLSOpts:        []func(*tls.Config){disableHTTP2},
		},
		WebhookServer:                 server,
		HealthProbeBindAddress:        o.HealthProbeBindAddress,
		PprofBindAddress:              o.PprofBindAddress,
		LeaderElection:                le.Enabled,
		LeaderElectionID:              le.ID,
		LeaderElectionNamespace:       o.Namespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(le.LeaseDuration),
		RenewDeadline:                 ptr.To(le.RenewDeadline),
		RetryPeriod:                   ptr.To(le.RetryPeriod),
		Cache:                         cache.Options{SyncPeriod: o.Testing.CacheSyncPeriod},
		NewClient:                     o.Testing.NewClient,
	}
	if o.Testing.SkipNameValidation {
		opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	}
	return opts, nil
}

// webhookServer is the webhook server of o (registered with the manager only once a webhook is).
func (o *Options) webhookServer() (webhook.Server, error) {
	tlsOpts, err := webhookTLSOpts(o.Webhooks.ClientCAFile, disableHTTP2)
	if err != nil {
		return nil, err
	}
	// Every webhook behind one bound on concurrent admissions and review size (webhooks.Gate).
	server := webhooks.Gate(webhook.Options{
		Host: o.Testing.WebhookHost, Port: o.Webhooks.Port, CertDir: o.Webhooks.CertDir, TLSOpts: tlsOpts,
	})
	if o.Testing.WrapWebhookServer != nil {
		server = o.Testing.WrapWebhookServer(server)
	}
	return server, nil
}

// controllerOptions are the reconcilers' options for o, with the events webhook's engine (nil
// when it is off).
func (o *Options) controllerOptions(events *eventratelimit.Engine) controllers.Options {
	var clk clock.PassiveClock = clock.RealClock{}
	if o.Testing.Clock != nil {
		clk = o.Testing.Clock
	}
	return controllers.Options{
		ManageDefaults:           o.ManageDefaults,
		Enforcement:              o.Enforcement,
		NativeMaxSeatLossPercent: ptr.To(int32(o.NativeMaxSeatLossPercent)),
		NativeUnmatched:          o.NativeUnmatched,
		NativeSeatsPeriod:        cmp.Or(o.Testing.NativeSeatsPeriod, o.NativeMetricsPeriod),
		ResyncPeriod:             o.DefaultsResync,
		Clock:                    clk,
		Registerer:               o.registerer(),
		EventRateLimit:           events,
		EventRateLimitDeployment: o.eventRateLimitDeployment(events),
		Operator:                 o.operatorAccount(),
		AutopilotInterval:        o.AutopilotInterval,
	}
}

// registerer is where the operator's metrics go: controller-runtime's registry, which the
// metrics endpoint serves, unless a test gave its own.
func (o *Options) registerer() prometheus.Registerer {
	if o.Testing.Registerer != nil {
		return o.Testing.Registerer
	}
	return metrics.Registry
}

func addHealthChecks(mgr manager.Manager) error {
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}
	return nil
}
