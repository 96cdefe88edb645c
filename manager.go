package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/apf-operator/apf-operator/internal/native/budget"
	"github.com/apf-operator/apf-operator/internal/operator"
)

// managerFlags are the manager's command-line settings: the operator's options, and where the
// process finds its cluster and writes its log.
type managerFlags struct {
	options    operator.Options
	kubeconfig string
	zap        zap.Options
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
	if err := f.options.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// bindManagerFlags adds the manager's flags to fs, controller-runtime's zap flags (Go flags)
// among them, and returns the settings they fill in, whose defaults are operator.NewOptions'.
func bindManagerFlags(fs *pflag.FlagSet) *managerFlags {
	f := &managerFlags{options: operator.NewOptions()}
	o := &f.options
	bindLeaderElectionFlags(fs, &o.LeaderElection)
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress,
		`Address of the metrics endpoint, served over HTTPS with Kubernetes authentication and authorization; "0" disables it.`)
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "Address of the /healthz and /readyz endpoints.")
	fs.StringVar(&o.PprofBindAddress, "pprof-bind-address", o.PprofBindAddress,
		`Address of Go's /debug/pprof profiles (CPU, heap, goroutines), unauthenticated: bind it to localhost (127.0.0.1:6060) and reach it with kubectl port-forward; "0" disables it.`)
	bindWebhookFlags(fs, &o.Webhooks)
	bindEnforcementFlags(fs, o)
	fs.Var(newListValue(&o.ExemptGroups), "exempt-groups",
		"Comma-separated groups allowed to create, change or delete level-0 (exempt) RequestPriorities, FlowSchemas that refer to them, and objects named system-*; system:masters is always allowed.")
	fs.Var(newListValue(&o.ExemptUsers), "exempt-users",
		"Comma-separated users with the same right; the operator's own service account is always included.")
	fs.StringVar(&o.Namespace, "namespace", os.Getenv("POD_NAMESPACE"),
		"Namespace the operator runs in (leader election Lease, webhook Secret); defaults to $POD_NAMESPACE.")
	fs.StringVar(&o.ServiceAccount, "service-account", os.Getenv("SERVICE_ACCOUNT_NAME"),
		"The operator's service account name; defaults to $SERVICE_ACCOUNT_NAME.")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "",
		"Path of a kubeconfig file; empty: $KUBECONFIG, the in-cluster config, then ~/.kube/config.")
	bindEventRateLimitFlags(fs, &o.EventRateLimit)
	fs.StringVar(&o.Webhooks.ClientCAFile, "webhook-client-ca-file", o.Webhooks.ClientCAFile,
		"PEM bundle of the CAs whose client certificates may call the webhook server; when set, a caller without such a certificate fails the TLS handshake (give kube-apiserver the certificate through its admission kubeconfig). Read again when the file changes. Empty: any caller that reaches the port is served.")
	zapFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	f.zap.BindFlags(zapFlags)
	fs.AddGoFlagSet(zapFlags)
	return f
}

func bindLeaderElectionFlags(fs *pflag.FlagSet, le *operator.LeaderElectionOptions) {
	fs.BoolVar(&le.Enabled, "leader-elect", le.Enabled,
		"Elect a leader so that one replica reconciles at a time (webhooks are served by every replica).")
	fs.StringVar(&le.ID, "leader-election-id", le.ID, "Name of the Lease used for leader election.")
	fs.DurationVar(&le.LeaseDuration, "leader-election-lease-duration", le.LeaseDuration,
		"How long a follower waits after the leader's last renewal before it takes the Lease over.")
	fs.DurationVar(&le.RenewDeadline, "leader-election-renew-deadline", le.RenewDeadline,
		"How long the leader keeps retrying to renew the Lease before it gives up leadership (and exits).")
	fs.DurationVar(&le.RetryPeriod, "leader-election-retry-period", le.RetryPeriod,
		"How often candidates try to acquire, and the leader to renew, the Lease.")
}

func bindWebhookFlags(fs *pflag.FlagSet, w *operator.WebhookOptions) {
	fs.IntVar(&w.Port, "webhook-port", w.Port, "Port of the validating webhook server.")
	fs.StringVar(&w.CertDir, "webhook-cert-dir", w.CertDir, "Directory holding the webhook server's tls.crt and tls.key.")
	fs.BoolVar(&w.Enabled, "enable-webhooks", w.Enabled, "Serve the validating webhooks.")
	fs.BoolVar(&w.CertRotation, "cert-rotation", w.CertRotation,
		"Make and rotate the webhook certificate in-process (Secret --webhook-secret-name, caBundle of --webhook-config-name); false when cert-manager provides it.")
	fs.StringVar(&w.SecretName, "webhook-secret-name", w.SecretName, "Secret holding the webhook certificate.")
	fs.StringVar(&w.ServiceName, "webhook-service-name", w.ServiceName, "Service in front of the webhook server (the certificate's DNS name).")
	fs.StringVar(&w.ConfigName, "webhook-config-name", w.ConfigName,
		"ValidatingWebhookConfiguration whose caBundle the certificate rotation keeps current.")
}

func bindEnforcementFlags(fs *pflag.FlagSet, o *operator.Options) {
	fs.BoolVar(&o.ManageDefaults, "manage-defaults", o.ManageDefaults,
		"Create the default RequestPriority and FlowSchema objects when needed and repair those marked autoupdate-spec=true.")
	fs.StringVar(&o.Enforcement, "enforcement", o.Enforcement,
		`How the configuration is enforced: "native" projects it onto kube-apiserver's own flowcontrol.apiserver.k8s.io/v1 objects, which kube-apiserver enforces; "none" manages and validates it only.`)
	fs.IntVar(&o.NativeMaxSeatLossPercent, "native-max-seat-loss-percent", o.NativeMaxSeatLossPercent,
		fmt.Sprintf("With enforcement native, the most (0 to %d) that kube-apiserver's own priority levels may lose of their share of the server to the operator's: RequestPriority shares past that budget are refused by the webhook and not projected (docs/enforcement.md, \"Share budget\").", budget.MaxMaxLossPercent))
	fs.DurationVar(&o.NativeMetricsPeriod, "native-metrics-period", o.NativeMetricsPeriod,
		fmt.Sprintf("With --enforcement=native, how often the leader reads kube-apiserver's /metrics: the native seats (status.nativeNominalSeats), the server concurrency limit of the share budget, and the rejections that status.observed summarises at most every second period; at least %s.", operator.MinNativeMetricsPeriod))
	fs.StringVar((*string)(&o.NativeUnmatched), "native-unmatched", string(o.NativeUnmatched),
		`With --enforcement=native, what classifies the requests no projected FlowSchema matches: "kube-apiserver" leaves them to its own service-accounts, global-default and catch-all schemas, as without the operator; "operator" projects the backstop FlowSchema non-top-backstop (precedence 8999) ahead of them.`)
	fs.DurationVar(&o.AutopilotInterval, "autopilot-interval", o.AutopilotInterval,
		"With --enforcement=native, how often the leader measures kube-apiserver's demand and steps the autopilot of the RequestPriorities with spec.autopilot (docs/autopilot-loop.md); at least 15s. A change needs two agreeing intervals.")
	fs.DurationVar(&o.DefaultsResync, "defaults-resync", o.DefaultsResync, "Period of the defaults reconciler's full resync.")
}

func bindEventRateLimitFlags(fs *pflag.FlagSet, e *operator.EventRateLimitOptions) {
	fs.BoolVar(&e.Enabled, "enable-event-rate-limit", e.Enabled,
		"Serve the EventRateLimit webhook on event creation (needs --enable-webhooks, and the webhook registered in the ValidatingWebhookConfiguration); false leaves events alone.")
	fs.StringVar(&e.Replicas, "event-rate-limit-replicas", e.Replicas,
		`How replicas share the EventRateLimit limits: "divide" divides qps and burst by the ready replicas of --event-rate-limit-deployment; "perReplica" gives each replica the full limits (cluster-wide up to replicas × qps).`)
	fs.StringVar(&e.Deployment, "event-rate-limit-deployment", e.Deployment,
		`The operator's Deployment in --namespace, whose ready replicas "divide" counts; empty: one replica is assumed.`)
}

// runManager runs the operator until a signal stops it, and logs why it stopped with an error.
func runManager(f *managerFlags) error {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&f.zap)))
	log := ctrl.Log.WithName("setup")
	restConfig, err := operator.LoadRESTConfig(f.kubeconfig)
	if err != nil {
		err = fmt.Errorf("loading the kubeconfig: %w", err)
	} else {
		err = operator.Run(ctrl.SetupSignalHandler(), restConfig, f.options)
	}
	if err != nil {
		log.Error(err, "Manager stopped with an error")
	}
	return err
}

// listValue is a comma-separated list flag, shown and defaulted as a string flag is; an empty
// value is an empty, non-nil list ("none", unlike an unset list).
type listValue struct{ list *[]string }

func newListValue(list *[]string) *listValue { return &listValue{list: list} }

func (v *listValue) String() string { return strings.Join(*v.list, ",") }

func (v *listValue) Set(s string) error {
	*v.list = splitList(s)
	return nil
}

// Type is "string", so that help shows the default quoted, as for the string flag it was.
func (v *listValue) Type() string { return "string" }

func splitList(s string) []string {
	out := []string{}
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
