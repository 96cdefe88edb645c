package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/apf-operator/apf-operator/controllers"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/managerbase"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/budget"
	"github.com/apf-operator/apf-operator/webhooks"
)

// managerFlags are the manager's command-line settings.
type managerFlags struct {
	leaderElect        bool
	leaderElectionID   string
	leaseDuration      time.Duration
	renewDeadline      time.Duration
	retryPeriod        time.Duration
	metricsAddr        string
	probeAddr          string
	pprofAddr          string
	webhookPort        int
	webhookCertDir     string
	enableWebhooks     bool
	certRotation       bool
	webhookSecretName  string
	webhookServiceName string
	webhookConfigName  string
	manageDefaults     bool
	enforcement        string
	maxSeatLoss        int
	nativeUnmatched    string
	defaultsResync     time.Duration
	autopilotInterval  time.Duration
	exemptGroups       string
	exemptUsers        string
	namespace          string
	serviceAccount     string
	kubeconfig         string
	zap                zap.Options
	// eventRateLimit is the EventRateLimit settings (manager_eventratelimit.go).
	eventRateLimit eventRateLimitFlags
	// webhookTLS is the webhook server's caller verification (manager_webhooktls.go).
	webhookTLS webhookTLSFlags
}

// parseManagerFlags parses the manager's command line and checks it (the tests' entry; the
// command binds the same flags with bindManagerFlags and lets cobra parse them).
func parseManagerFlags(args []string) (*managerFlags, error) {
	fs := pflag.NewFlagSet("apf-operator manager", pflag.ContinueOnError)
	f := bindManagerFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// bindManagerFlags adds the manager's flags to fs, controller-runtime's zap flags (Go flags)
// among them, and returns the settings they fill in.
func bindManagerFlags(fs *pflag.FlagSet) *managerFlags {
	f := &managerFlags{}
	fs.BoolVar(&f.leaderElect, "leader-elect", true,
		"Elect a leader so that one replica reconciles at a time (webhooks are served by every replica).")
	fs.StringVar(&f.leaderElectionID, "leader-election-id", "apf-operator.flowcontrol.apf-operator.io",
		"Name of the Lease used for leader election.")
	// The defaults are controller-runtime's (and kube-controller-manager's); tests shorten them.
	fs.DurationVar(&f.leaseDuration, "leader-election-lease-duration", 15*time.Second,
		"How long a follower waits after the leader's last renewal before it takes the Lease over.")
	fs.DurationVar(&f.renewDeadline, "leader-election-renew-deadline", 10*time.Second,
		"How long the leader keeps retrying to renew the Lease before it gives up leadership (and exits).")
	fs.DurationVar(&f.retryPeriod, "leader-election-retry-period", 2*time.Second,
		"How often candidates try to acquire, and the leader to renew, the Lease.")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", ":8443",
		`Address of the metrics endpoint, served over HTTPS with Kubernetes authentication and authorization; "0" disables it.`)
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints.")
	fs.StringVar(&f.pprofAddr, "pprof-bind-address", "0",
		`Address of Go's /debug/pprof profiles (CPU, heap, goroutines), unauthenticated: bind it to localhost (127.0.0.1:6060) and reach it with kubectl port-forward; "0" disables it.`)
	fs.IntVar(&f.webhookPort, "webhook-port", 9443, "Port of the validating webhook server.")
	fs.StringVar(&f.webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs",
		"Directory holding the webhook server's tls.crt and tls.key.")
	fs.BoolVar(&f.enableWebhooks, "enable-webhooks", true, "Serve the validating webhooks.")
	fs.BoolVar(&f.certRotation, "cert-rotation", true,
		"Make and rotate the webhook certificate in-process (Secret --webhook-secret-name, caBundle of --webhook-config-name); false when cert-manager provides it.")
	fs.StringVar(&f.webhookSecretName, "webhook-secret-name", "apf-operator-webhook-tls", "Secret holding the webhook certificate.")
	fs.StringVar(&f.webhookServiceName, "webhook-service-name", "apf-operator-webhook", "Service in front of the webhook server (the certificate's DNS name).")
	fs.StringVar(&f.webhookConfigName, "webhook-config-name", "apf-operator-validating-webhook",
		"ValidatingWebhookConfiguration whose caBundle the certificate rotation keeps current.")
	fs.BoolVar(&f.manageDefaults, "manage-defaults", true,
		"Create the default RequestPriority and FlowSchema objects when needed and repair those marked autoupdate-spec=true.")
	fs.StringVar(&f.enforcement, "enforcement", controllers.EnforcementNative,
		`How the configuration is enforced: "native" projects it onto kube-apiserver's own flowcontrol.apiserver.k8s.io/v1 objects, which kube-apiserver enforces; "none" manages and validates it only.`)
	fs.IntVar(&f.maxSeatLoss, "native-max-seat-loss-percent", budget.DefaultMaxLossPercent,
		"With enforcement native, the most (0 to 90) that kube-apiserver's own priority levels may lose of their share of the server to the operator's: RequestPriority shares past that budget are refused by the webhook and not projected (docs/enforcement.md, \"Share budget\").")
	fs.StringVar(&f.nativeUnmatched, "native-unmatched", string(native.UnmatchedKubeAPIServer),
		`With --enforcement=native, what classifies the requests no projected FlowSchema matches: "kube-apiserver" leaves them to its own service-accounts, global-default and catch-all schemas, as without the operator; "operator" projects the backstop FlowSchema non-top-backstop (precedence 8999) ahead of them.`)
	fs.DurationVar(&f.autopilotInterval, "autopilot-interval", controllers.DefaultAutopilotInterval,
		"With --enforcement=native, how often the leader measures kube-apiserver's demand and steps the autopilot of the RequestPriorities with spec.autopilot (docs/autopilot-loop.md); at least 15s. A change needs two agreeing intervals.")
	fs.DurationVar(&f.defaultsResync, "defaults-resync", 10*time.Minute, "Period of the defaults reconciler's full resync.")
	fs.StringVar(&f.exemptGroups, "exempt-groups", "system:masters",
		"Comma-separated groups allowed to create, change or delete level-0 (exempt) RequestPriorities, FlowSchemas that refer to them, and objects named system-*; system:masters is always allowed.")
	fs.StringVar(&f.exemptUsers, "exempt-users", "",
		"Comma-separated users with the same right; the operator's own service account is always included.")
	fs.StringVar(&f.namespace, "namespace", os.Getenv("POD_NAMESPACE"),
		"Namespace the operator runs in (leader election Lease, webhook Secret); defaults to $POD_NAMESPACE.")
	fs.StringVar(&f.serviceAccount, "service-account", os.Getenv("SERVICE_ACCOUNT_NAME"),
		"The operator's service account name; defaults to $SERVICE_ACCOUNT_NAME.")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "",
		"Path of a kubeconfig file; empty: $KUBECONFIG, the in-cluster config, then ~/.kube/config.")
	f.eventRateLimit.bind(fs)
	f.webhookTLS.bind(fs)
	zapFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	f.zap.BindFlags(zapFlags)
	fs.AddGoFlagSet(zapFlags)
	return f
}

// check validates the parsed settings; its errors name the flag and the accepted values.
func (f *managerFlags) check() error {
	if f.enforcement != controllers.EnforcementNative && f.enforcement != controllers.EnforcementNone {
		return fmt.Errorf("--enforcement=%q: use %q or %q", f.enforcement, controllers.EnforcementNative, controllers.EnforcementNone)
	}
	if f.maxSeatLoss < 0 || f.maxSeatLoss > budget.MaxMaxLossPercent {
		return fmt.Errorf("--native-max-seat-loss-percent=%d: use 0 to %d", f.maxSeatLoss, budget.MaxMaxLossPercent)
	}
	if f.autopilotInterval < controllers.MinAutopilotInterval {
		return fmt.Errorf("--autopilot-interval=%s: use at least %s (each step reads kube-apiserver's /metrics; the demand of a shorter window is noise)",
			f.autopilotInterval, controllers.MinAutopilotInterval)
	}
	if _, err := native.ParseUnmatched(f.nativeUnmatched); err != nil {
		return fmt.Errorf("--native-unmatched: %w", err)
	}
	if err := f.eventRateLimit.check(); err != nil {
		return err
	}
	if err := f.webhookTLS.check(); err != nil {
		return err
	}
	// client-go's own rule: the leader must get a few jittered retries before its deadline.
	minRenew := time.Duration(leaderelection.JitterFactor * float64(f.retryPeriod))
	if f.leaderElect && (f.leaseDuration <= f.renewDeadline || f.renewDeadline <= minRenew || f.retryPeriod <= 0) {
		return fmt.Errorf("leader election needs --leader-election-lease-duration (%s) > --leader-election-renew-deadline (%s) > %.1f x --leader-election-retry-period (%s) > 0",
			f.leaseDuration, f.renewDeadline, leaderelection.JitterFactor, f.retryPeriod)
	}
	if (f.certRotation && f.enableWebhooks || f.leaderElect) && f.namespace == "" {
		return fmt.Errorf("--namespace (or $POD_NAMESPACE) is required for leader election and certificate rotation")
	}
	return nil
}

// operatorUser is the username of the operator's service account, always allowed to manage the
// exempt level (it creates the default system-top objects).
func (f *managerFlags) operatorUser() string {
	if sa := f.operatorAccount(); sa != nil {
		return sa.Username()
	}
	return ""
}

// operatorAccount is the operator's own service account, whose requests the projection routes
// ahead of the users' schemas; nil when unknown (a local `make run`).
func (f *managerFlags) operatorAccount() *native.ServiceAccount {
	if f.namespace == "" || f.serviceAccount == "" {
		return nil
	}
	return &native.ServiceAccount{Namespace: f.namespace, Name: f.serviceAccount}
}

// runManager runs the operator until a signal stops it.
func runManager(f *managerFlags) error {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.zap)))
	log := ctrl.Log.WithName("setup")
	if err := startManager(ctrl.SetupSignalHandler(), f); err != nil {
		log.Error(err, "Manager stopped with an error")
		return err
	}
	return nil
}

func startManager(ctx context.Context, f *managerFlags) error {
	disableHTTP2 := func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} } // CVE-2023-44487
	restConfig, err := loadRESTConfig(f.kubeconfig)
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	mgr, err := managerbase.New(ctx, restConfig, ctrl.Options{
		Metrics: metricsserver.Options{
			BindAddress:    f.metricsAddr,
			SecureServing:  true,
			FilterProvider: filters.WithAuthenticationAndAuthorization,
			TLSOpts:        []func(*tls.Config){disableHTTP2},
		},
		WebhookServer: webhook.NewServer(webhook.Options{
			Port: f.webhookPort, CertDir: f.webhookCertDir, TLSOpts: f.webhookTLS.opts(disableHTTP2),
		}),
		HealthProbeBindAddress:        f.probeAddr,
		PprofBindAddress:              f.pprofAddr,
		LeaderElection:                f.leaderElect,
		LeaderElectionID:              f.leaderElectionID,
		LeaderElectionNamespace:       f.namespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &f.leaseDuration,
		RenewDeadline:                 &f.renewDeadline,
		RetryPeriod:                   &f.retryPeriod,
	})
	if err != nil {
		return err
	}
	events, err := f.eventRateLimitEngine()
	if err != nil {
		return err
	}
	if err := controllers.SetupWithManager(mgr, controllers.Options{
		ManageDefaults:           f.manageDefaults,
		Enforcement:              f.enforcement,
		NativeMaxSeatLossPercent: ptr.To(int32(f.maxSeatLoss)),
		NativeUnmatched:          native.Unmatched(f.nativeUnmatched),
		ResyncPeriod:             f.defaultsResync,
		Clock:                    clock.RealClock{},
		Registerer:               metrics.Registry,
		EventRateLimit:           events,
		EventRateLimitDeployment: f.eventRateLimitDeployment(events),
		Operator:                 f.operatorAccount(),
		AutopilotInterval:        f.autopilotInterval,
	}); err != nil {
		return fmt.Errorf("setting up the reconcilers: %w", err)
	}
	if err := addHealthChecks(mgr); err != nil {
		return err
	}
	if f.enableWebhooks {
		if err := setupWebhooks(mgr, f, events); err != nil {
			return err
		}
	}
	ctrl.Log.WithName("setup").Info("Starting the manager", "leaderElection", f.leaderElect,
		"webhooks", f.enableWebhooks, "manageDefaults", f.manageDefaults, "enforcement", f.enforcement,
		"nativeUnmatched", f.nativeUnmatched)
	return mgr.Start(ctx)
}

func loadRESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err == nil && cfg.QPS == 0 {
			// As ctrl.GetConfig does: no client-side rate limit (client-go's default is 5
			// requests per second), kube-apiserver's flow control limits the operator.
			cfg.QPS = -1
		}
		return cfg, err
	}
	return ctrl.GetConfig()
}

func addHealthChecks(mgr ctrl.Manager) error {
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readiness check: %w", err)
	}
	return nil
}

// setupWebhooks registers the validating webhooks. With in-process certificate rotation they
// are registered only once the rotator has written the certificate: registering them adds the
// webhook server to the manager, and the server cannot start without its certificate files.
// Readiness fails until the webhook server serves.
func setupWebhooks(mgr ctrl.Manager, f *managerFlags, events *eventratelimit.Engine) error {
	opts := webhooks.Options{ExemptGroups: splitList(f.exemptGroups), ExemptUsers: splitList(f.exemptUsers),
		NativeWarnings: f.enforcement == controllers.EnforcementNative, EventRateLimit: events,
		NativeShareBudget: f.enforcement == controllers.EnforcementNative, NativeMaxSeatLossPercent: int32(f.maxSeatLoss)}
	if u := f.operatorUser(); u != "" {
		opts.ExemptUsers = append(opts.ExemptUsers, u)
	}
	registered := &atomic.Bool{}
	if err := mgr.AddReadyzCheck("webhook", webhookReady(mgr, registered)); err != nil {
		return fmt.Errorf("adding the webhook readiness check: %w", err)
	}
	if !f.certRotation {
		registered.Store(true)
		return webhooks.SetupWithManager(mgr, opts)
	}
	certsReady := make(chan struct{})
	if err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: f.namespace, Name: f.webhookSecretName},
		CertDir:        f.webhookCertDir,
		CAName:         "apf-operator-ca",
		CAOrganization: "apf-operator",
		DNSName:        fmt.Sprintf("%s.%s.svc", f.webhookServiceName, f.namespace),
		ExtraDNSNames: []string{
			f.webhookServiceName, fmt.Sprintf("%s.%s", f.webhookServiceName, f.namespace),
			fmt.Sprintf("%s.%s.svc.cluster.local", f.webhookServiceName, f.namespace),
		},
		IsReady:               certsReady,
		Webhooks:              []rotator.WebhookInfo{{Name: f.webhookConfigName, Type: rotator.Validating}},
		RequireLeaderElection: false, // every replica serves webhooks and needs the certificate
		FieldOwner:            "apf-operator",
	}); err != nil {
		return fmt.Errorf("setting up certificate rotation: %w", err)
	}
	return mgr.Add(&webhookRegistrar{mgr: mgr, opts: opts, certsReady: certsReady, registered: registered})
}

// webhookReady fails until the webhooks are registered, then reports whether their server
// accepts TLS connections.
func webhookReady(mgr ctrl.Manager, registered *atomic.Bool) healthz.Checker {
	return func(req *http.Request) error {
		if !registered.Load() {
			return errors.New("webhooks not registered yet: waiting for the webhook certificate")
		}
		return mgr.GetWebhookServer().StartedChecker()(req)
	}
}

// webhookRegistrar registers the webhooks once the certificate rotator has written the
// certificate; a registration error stops the manager.
type webhookRegistrar struct {
	mgr        ctrl.Manager
	opts       webhooks.Options
	certsReady <-chan struct{}
	registered *atomic.Bool
}

// Start waits for the certificate, registers the webhooks and waits for the end.
func (w *webhookRegistrar) Start(ctx context.Context) error {
	select {
	case <-w.certsReady:
	case <-ctx.Done():
		return nil
	}
	if err := webhooks.SetupWithManager(w.mgr, w.opts); err != nil {
		return fmt.Errorf("setting up the webhooks: %w", err)
	}
	w.registered.Store(true)
	ctrl.Log.WithName("setup").Info("Webhooks registered with the rotated certificate")
	<-ctx.Done()
	return nil
}

// NeedLeaderElection is false: every replica serves the webhooks.
func (w *webhookRegistrar) NeedLeaderElection() bool { return false }

func splitList(s string) []string {
	out := []string{}
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
