package controllers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/managerbase"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// The suite shares one real kube-apiserver and etcd. Tests run one after another: each starts
// from an empty cluster (resetCluster) and runs its own operator (startOperator), because the
// defaults reconciler acts on the whole cluster.
var (
	testEnv    *envtest.Environment
	restConfig *rest.Config
	testScheme = runtime.NewScheme()
	// k8s reads and writes directly through the API server, as a user would: no cache.
	k8s client.WithWatch
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	log.SetLogger(testLogger())
	if err := clientgoscheme.AddToScheme(testScheme); err != nil {
		return fail(err)
	}
	if err := flowv1.AddToScheme(testScheme); err != nil {
		return fail(err)
	}
	var err error
	if testEnv, err = envtestutil.NewEnvironment(); err != nil {
		return fail(err)
	}
	if restConfig, err = testEnv.Start(); err != nil {
		return fail(fmt.Errorf("starting envtest: %w", err))
	}
	defer func() { _ = testEnv.Stop() }()
	if k8s, err = client.NewWithWatch(restConfig, client.Options{Scheme: testScheme}); err != nil {
		return fail(err)
	}
	return m.Run()
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "controllers suite:", err)
	return 1
}

// testLogger keeps the operator's logs quiet unless APF_TEST_VERBOSE is set.
func testLogger() logr.Logger {
	if os.Getenv("APF_TEST_VERBOSE") == "" {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 1})
}

// testQuiet are the quiet periods of the suite's operators, unless a test sets its own:
// production's (2 s for a burst of changes, 10 s before a missing RequestPriority is
// reported) would make every step of every test wait them. The burst logic itself is tested
// with production's periods (burst_unit_test.go, test/scale). The user period stays long
// enough that TestMissingReferenceWaitsForQuiet, reading one-second timestamps, still tells a
// report deferred by it (at least 2 s) from one made at once (under 1 s).
var testQuiet = quietPeriods{user: 3 * time.Second, snapshot: 200 * time.Millisecond}

// operatorConfig adjusts a test operator.
type operatorConfig struct {
	options Options
	// config, when set, is the operator's identity (default: the suite's admin).
	config *rest.Config
	// syncPeriod, when set, is the cache's informer resync period.
	syncPeriod *time.Duration
	// create, when set, intercepts the operator's creations (to inject races and crashes).
	create func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error
}

// testOperator is a running operator: a manager with every reconciler of SetupWithManager.
type testOperator struct {
	registry *prometheus.Registry
	// writes counts the successful writes the operator's client made (objects and status);
	// written lists them, for failure messages.
	writes  atomic.Int64
	mu      sync.Mutex
	written []string
	stop    func()
}

// record counts a successful write.
func (op *testOperator) record(verb string, obj client.Object) {
	op.writes.Add(1)
	op.mu.Lock()
	defer op.mu.Unlock()
	op.written = append(op.written, fmt.Sprintf("%s %T %s", verb, obj, obj.GetName()))
}

// writesSince lists the writes after the first n.
func (op *testOperator) writesSince(n int64) []string {
	op.mu.Lock()
	defer op.mu.Unlock()
	return append([]string(nil), op.written[n:]...)
}

// startOperator starts an operator and returns once its cache is synced. It stops when the
// test ends, or earlier through stop.
func startOperator(t testing.TB, cfg operatorConfig) *testOperator {
	t.Helper()
	op := &testOperator{registry: prometheus.NewRegistry()}
	opts := cfg.options
	opts.Registerer = op.registry
	if opts.quiet == (quietPeriods{}) {
		opts.quiet = testQuiet
	}
	identity := restConfig
	if cfg.config != nil {
		identity = cfg.config
	}
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := managerbase.New(ctx, identity, ctrl.Options{
		Scheme:                 testScheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  cache.Options{SyncPeriod: cfg.syncPeriod},
		NewClient:              op.newClient(cfg.create),
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := SetupWithManager(mgr, opts); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	op.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("operator stopped with %v", err)
		}
	}
	t.Cleanup(op.stop)
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the operator's cache did not sync")
	}
	return op
}

// newClient wraps the manager's client to count its successful writes.
func (op *testOperator) newClient(create func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error) client.NewClientFunc {
	counted := func(verb string, obj client.Object, err error) error {
		if err == nil {
			op.record(verb, obj)
		}
		return err
	}
	return func(cfg *rest.Config, o client.Options) (client.Client, error) {
		inner, err := client.NewWithWatch(cfg, o)
		if err != nil {
			return nil, err
		}
		return interceptor.NewClient(inner, interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if create != nil {
					return counted("create", obj, create(ctx, c, obj, opts...))
				}
				return counted("create", obj, c.Create(ctx, obj, opts...))
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				return counted("update", obj, c.Update(ctx, obj, opts...))
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
				return counted("patch", obj, c.Patch(ctx, obj, p, opts...))
			},
			Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
				err := c.Apply(ctx, obj, opts...)
				if named, ok := obj.(interface{ GetName() string }); ok && err == nil {
					op.record("apply", &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: named.GetName()}})
				} else if err == nil {
					op.record("apply", &metav1.PartialObjectMetadata{})
				}
				return err
			},
			Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				return counted("delete", obj, c.Delete(ctx, obj, opts...))
			},
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				return counted("update "+sub, obj, c.SubResource(sub).Update(ctx, obj, opts...))
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				return counted("patch "+sub, obj, c.SubResource(sub).Patch(ctx, obj, p, opts...))
			},
		}), nil
	}
}

// resetCluster deletes every RequestPriority, FlowSchema and Event and waits until they are
// gone. No operator may be running.
func resetCluster(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	for _, obj := range []client.Object{&flowv1.RequestPriority{}, &flowv1.FlowSchema{}} {
		if err := k8s.DeleteAllOf(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := k8s.DeleteAllOf(ctx, &eventsv1.Event{}, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	owned := client.MatchingLabels{flowv1.LabelManagedBy: flowv1.ManagedByValue}
	for _, obj := range []client.Object{&flowcontrolv1.FlowSchema{}, &flowcontrolv1.PriorityLevelConfiguration{}} {
		if err := k8s.DeleteAllOf(ctx, obj, owned); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, func() error {
		rps, fss, err := listOurs(ctx)
		if err != nil {
			return err
		}
		if n := len(rps.Items) + len(fss.Items); n > 0 {
			return fmt.Errorf("%d objects left", n)
		}
		return nil
	})
}

// realClock is the clock of operators whose tests do not look at transition times.
var realClock clock.PassiveClock = clock.RealClock{}
