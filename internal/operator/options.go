package operator

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/apf-operator/apf-operator/controllers"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/budget"
)

// Options are the operator's settings, one field (or group) per flag of `apf-operator
// manager`, whose name each comment gives. NewOptions returns production's; tests start from
// it and change what they need.
type Options struct {
	// LeaderElection elects one replica to run the reconcilers.
	LeaderElection LeaderElectionOptions
	// MetricsBindAddress is the metrics endpoint's address, served over HTTPS with Kubernetes
	// authentication and authorization; "0" disables it (--metrics-bind-address).
	MetricsBindAddress string
	// HealthProbeBindAddress is the /healthz and /readyz endpoints' address; "0" disables
	// them (--health-probe-bind-address).
	HealthProbeBindAddress string
	// PprofBindAddress is the address of Go's /debug/pprof profiles, unauthenticated; "0"
	// disables them (--pprof-bind-address).
	PprofBindAddress string
	// Webhooks is the validating webhook server and its certificate.
	Webhooks WebhookOptions
	// ManageDefaults creates the default objects when needed and repairs those marked
	// autoupdate-spec=true (--manage-defaults).
	ManageDefaults bool
	// Enforcement is controllers.EnforcementNative or controllers.EnforcementNone
	// (--enforcement).
	Enforcement string
	// NativeMaxSeatLossPercent is the most (0 to budget.MaxMaxLossPercent) that kube-apiserver's
	// own levels may lose of their share of the server (--native-max-seat-loss-percent).
	NativeMaxSeatLossPercent int
	// NativeMetricsPeriod is how often the leader reads kube-apiserver's /metrics, with
	// enforcement native: the native seats, the server concurrency limit, and the rejection
	// counters that status.observed summarises at most every second period; at least
	// MinNativeMetricsPeriod (--native-metrics-period).
	NativeMetricsPeriod time.Duration
	// NativeUnmatched says what classifies the requests no projected FlowSchema matches
	// (--native-unmatched).
	NativeUnmatched native.Unmatched
	// DefaultsResync is the defaults reconciler's full resync period (--defaults-resync).
	DefaultsResync time.Duration
	// AutopilotInterval is how often the leader steps the autopilot, at least
	// controllers.MinAutopilotInterval (--autopilot-interval).
	AutopilotInterval time.Duration
	// ExemptGroups may manage the exempt level; nil means system:masters, empty no group
	// (--exempt-groups).
	ExemptGroups []string
	// ExemptUsers may too; the operator's own service account is always added
	// (--exempt-users).
	ExemptUsers []string
	// Namespace is the operator's namespace: the leader election Lease's and the webhook
	// Secret's (--namespace).
	Namespace string
	// ServiceAccount is the operator's service account in Namespace; empty when unknown
	// (--service-account).
	ServiceAccount string
	// EventRateLimit is the events webhook.
	EventRateLimit EventRateLimitOptions
	// Testing holds settings production leaves at their zero values.
	Testing TestingOptions
}

// LeaderElectionOptions are the --leader-elect* flags. The durations' defaults are
// controller-runtime's (and kube-controller-manager's).
type LeaderElectionOptions struct {
	// Enabled elects a leader, so that one replica reconciles at a time (--leader-elect).
	Enabled bool
	// ID is the Lease's name (--leader-election-id).
	ID string
	// LeaseDuration is how long a follower waits after the leader's last renewal
	// (--leader-election-lease-duration).
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader retries renewing before it gives up
	// (--leader-election-renew-deadline).
	RenewDeadline time.Duration
	// RetryPeriod is how often candidates try to acquire, and the leader to renew, the Lease
	// (--leader-election-retry-period).
	RetryPeriod time.Duration
}

// WebhookOptions are the webhook server's flags.
type WebhookOptions struct {
	// Enabled serves the validating webhooks (--enable-webhooks).
	Enabled bool
	// Port is the webhook server's port (--webhook-port).
	Port int
	// CertDir holds the server's tls.crt and tls.key (--webhook-cert-dir).
	CertDir string
	// CertRotation makes and rotates the certificate in-process; false when cert-manager
	// provides it (--cert-rotation).
	CertRotation bool
	// SecretName is the Secret holding the certificate (--webhook-secret-name).
	SecretName string
	// ServiceName is the Service in front of the server, the certificate's DNS name
	// (--webhook-service-name).
	ServiceName string
	// ConfigName is the ValidatingWebhookConfiguration whose caBundle the rotation keeps
	// current (--webhook-config-name).
	ConfigName string
	// ClientCAFile, when set, is the PEM bundle of the CAs whose client certificates may call
	// the server; read again when it changes (--webhook-client-ca-file).
	ClientCAFile string
}

// EventRateLimitOptions are the events webhook's flags.
type EventRateLimitOptions struct {
	// Enabled serves the EventRateLimit webhook on event creation; it needs Webhooks.Enabled
	// (--enable-event-rate-limit).
	Enabled bool
	// Replicas is controllers.EventRateLimitDivide or EventRateLimitPerReplica
	// (--event-rate-limit-replicas).
	Replicas string
	// Deployment is the operator's Deployment in Namespace, whose ready replicas "divide"
	// counts; empty: one replica is assumed (--event-rate-limit-deployment).
	Deployment string
}

// TestingOptions are settings only tests change. No flag sets them; their zero values are
// production's.
type TestingOptions struct {
	// Registerer receives the operator's metrics; nil means controller-runtime's
	// metrics.Registry, where a process can register them once. Tests that run several
	// operators pass a fresh registry to each.
	Registerer prometheus.Registerer
	// Clock stamps condition transition times; nil means the real clock.
	Clock clock.PassiveClock
	// SkipNameValidation lets several managers of one process register controllers of the
	// same name.
	SkipNameValidation bool
	// NativeSeatsPeriod, when set, is how often the leader reads kube-apiserver's /metrics in
	// place of NativeMetricsPeriod; negative turns the reading off.
	NativeSeatsPeriod time.Duration
	// CacheSyncPeriod, when set, is the informers' resync period; nil means
	// controller-runtime's.
	CacheSyncPeriod *time.Duration
	// NewClient, when set, makes the manager's client (to count or fail its writes); nil
	// means controller-runtime's.
	NewClient client.NewClientFunc
	// EventRateLimitEngine, when set, is the engine the EventRateLimit objects configure (and
	// the events webhook serves, with Webhooks.Enabled), whatever EventRateLimit.Enabled says,
	// so that a test can read it; nil means one is made when the events webhook is on.
	EventRateLimitEngine *eventratelimit.Engine
	// WebhookHost is the host the webhook server listens on; empty means every interface.
	WebhookHost string
	// WrapWebhookServer, when set, wraps the webhook server (to time its handlers).
	WrapWebhookServer func(webhook.Server) webhook.Server
}

// NewOptions returns production's options: the defaults of `apf-operator manager`'s flags,
// except Namespace and ServiceAccount, which the command takes from $POD_NAMESPACE and
// $SERVICE_ACCOUNT_NAME.
func NewOptions() Options {
	return Options{
		LeaderElection: LeaderElectionOptions{
			Enabled: true, ID: "apf-operator.flowcontrol.apf-operator.io",
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		},
		MetricsBindAddress:     ":8443",
		HealthProbeBindAddress: ":8081",
		PprofBindAddress:       "0",
		Webhooks: WebhookOptions{
			Enabled: true, Port: 9443, CertDir: "/tmp/k8s-webhook-server/serving-certs", CertRotation: true,
			SecretName: "apf-operator-webhook-tls", ServiceName: "apf-operator-webhook",
			ConfigName: "apf-operator-validating-webhook",
		},
		ManageDefaults:           true,
		Enforcement:              controllers.EnforcementNative,
		NativeMaxSeatLossPercent: budget.DefaultMaxLossPercent,
		NativeUnmatched:          native.UnmatchedKubeAPIServer,
		NativeMetricsPeriod:      controllers.DefaultNativeSeatsPeriod,
		DefaultsResync:           10 * time.Minute,
		AutopilotInterval:        controllers.DefaultAutopilotInterval,
		ExemptGroups:             []string{"system:masters"},
		ExemptUsers:              []string{},
		EventRateLimit:           EventRateLimitOptions{Replicas: controllers.EventRateLimitDivide},
	}
}

// operatorAccount is the operator's own service account, whose requests the projection routes
// ahead of the users' schemas; nil when unknown (a local `make run`).
func (o *Options) operatorAccount() *native.ServiceAccount {
	if o.Namespace == "" || o.ServiceAccount == "" {
		return nil
	}
	return &native.ServiceAccount{Namespace: o.Namespace, Name: o.ServiceAccount}
}

// operatorUser is the username of the operator's service account, always allowed to manage the
// exempt level (it creates the default system-top objects); empty when unknown.
func (o *Options) operatorUser() string {
	if sa := o.operatorAccount(); sa != nil {
		return sa.Username()
	}
	return ""
}
