package scale

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	apfoperator "github.com/apf-operator/apf-operator/internal/operator"
	"github.com/apf-operator/apf-operator/test/envtestutil"
	"github.com/apf-operator/apf-operator/test/harness"
)

// operatorUserAgent tells the operator's requests apart from the load's in the audit log.
const operatorUserAgent = "apf-operator-scale-test"

// auditPolicy records every write (metadata only) and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

// environment is a control plane with the webhooks installed and an audit log of writes.
type environment struct {
	env      *envtest.Environment
	cfg      *rest.Config
	scheme   *runtime.Scheme
	auditLog string
}

func startEnvironment(dir string) (*environment, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	env, err := envtestutil.NewEnvironment()
	if err != nil {
		return nil, err
	}
	env.WebhookInstallOptions = envtest.WebhookInstallOptions{Paths: []string{envtestutil.WebhookDir()}}
	e := &environment{env: env, scheme: runtime.NewScheme(), auditLog: filepath.Join(dir, "audit.log")}
	// etcd without fsync: the test measures the operator and kube-apiserver, not this machine's
	// disk (a test environment's setting only; docs/scale.md).
	if env.ControlPlane.Etcd == nil {
		env.ControlPlane.Etcd = &envtest.Etcd{}
	}
	env.ControlPlane.Etcd.Configure().Set("unsafe-no-fsync", "true")
	args := env.ControlPlane.GetAPIServer().Configure()
	args.Set("audit-policy-file", policy).Set("audit-log-path", e.auditLog).Set("audit-log-format", "json").
		Set("audit-log-mode", "batch")
	if err := clientgoscheme.AddToScheme(e.scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(e.scheme); err != nil {
		return nil, err
	}
	if e.cfg, err = env.Start(); err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	return e, nil
}

// operatorUnderTest is the operator the load is applied to, in process or as a process.
type operatorUnderTest interface {
	// snapshots returns how many snapshots the operator computed and the time they took.
	snapshots() (uint64, time.Duration, error)
	latency() (latencyFigures, error)
	// memory returns the peak heap and RSS of what measured names.
	memory() (heap, rss uint64, err error)
	measured() string
	// wrote reports whether a request of this user agent is the operator's.
	wrote(userAgent string) bool
	// profile starts a CPU profile of the operator (-scale.cpu-profile; nil in process).
	profile(ctx context.Context) *profiler
	// log is the operator's log ("" in process: the test discards it).
	log() string
	stop() error
}

// operator is the operator running in process: status reconcilers, projector and webhooks.
type operator struct {
	latencies *latencyRecorder
	registry  *prometheus.Registry
	heap      *memorySampler
	stopFunc  func() error
}

// startOperator runs the operator as main.go sets it up (internal/operator; enforcement native,
// no defaults, so the cluster holds only the load), serving the webhooks on envtest's port with
// their handlers timed, and waits until it serves.
func (e *environment) startOperator(ctx context.Context) (*operator, error) {
	cfg := rest.CopyConfig(e.cfg)
	cfg.UserAgent = operatorUserAgent
	cfg.QPS, cfg.Burst = -1, 0 // ctrl.GetConfig's default, as the operator runs: no client-side limit
	op := &operator{latencies: &latencyRecorder{}, registry: prometheus.NewRegistry()}
	ctx, cancel := context.WithCancel(ctx)
	mgr, err := apfoperator.New(ctx, cfg, e.operatorOptions(op))
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	op.stopFunc = func() error {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	}
	if err := harness.WaitServing(ctx, mgr); err != nil {
		_ = op.stop()
		return nil, err
	}
	op.heap = startMemorySampler(100 * time.Millisecond)
	return op, nil
}

// operatorOptions are production's options without leader election, defaults, metrics server
// or certificate rotation, the webhooks served with envtest's certificate where its
// configuration calls them, op's registry receiving the metrics and op's recorder timing the
// webhook handlers.
func (e *environment) operatorOptions(op *operator) apfoperator.Options {
	wo := e.env.WebhookInstallOptions
	o := apfoperator.NewOptions()
	o.LeaderElection.Enabled, o.ManageDefaults = false, false
	o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0"
	o.Webhooks.CertRotation, o.Webhooks.Port, o.Webhooks.CertDir = false, wo.LocalServingPort, wo.LocalServingCertDir
	o.NativeMaxSeatLossPercent = scaleMaxSeatLoss
	o.Testing = apfoperator.TestingOptions{Registerer: op.registry, WebhookHost: wo.LocalServingHost,
		WrapWebhookServer: func(s webhook.Server) webhook.Server { return &timedServer{Server: s, latency: op.latencies} }}
	return o
}

func (op *operator) stop() error { return op.stopFunc() }

func (op *operator) latency() (latencyFigures, error) { return op.latencies.figures(), nil }

func (op *operator) memory() (heap, rss uint64, err error) {
	heap = op.heap.finish()
	rss, err = peakRSS("/proc/self/status")
	return heap, rss, err
}

func (op *operator) measured() string { return "test process: operator, load clients and checker" }

func (op *operator) wrote(userAgent string) bool { return userAgent == operatorUserAgent }

func (op *operator) log() string { return "" }

func (op *operator) profile(context.Context) *profiler { return nil }

// snapshots returns how many snapshots the operator computed and the time they took.
func (op *operator) snapshots() (uint64, time.Duration, error) {
	families, err := op.registry.Gather()
	if err != nil {
		return 0, 0, err
	}
	for _, f := range families {
		if f.GetName() == "apf_operator_snapshot_duration_seconds" && len(f.GetMetric()) == 1 {
			h := f.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), time.Duration(h.GetSampleSum() * float64(time.Second)), nil
		}
	}
	return 0, 0, errors.New("no apf_operator_snapshot_duration_seconds metric")
}

// adminClient is the load's client: a user applying manifests, without client-side limits.
func (e *environment) adminClient() (client.Client, error) {
	cfg := rest.CopyConfig(e.cfg)
	cfg.QPS, cfg.Burst = -1, 0
	return client.New(cfg, client.Options{Scheme: e.scheme})
}
