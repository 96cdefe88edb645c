package controllers

import (
	"cmp"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/native"
)

// The permissions the reconcilers use, and no more: they read both kinds through the cache,
// create defaults, repair them with a JSON patch, write status with an update (optimistic
// concurrency), and record events (the events.k8s.io recorder creates, then patches a series).
// The operator deletes only the defaults of the other enforcement mode that it created
// (retirement, internal/defaults).
// +kubebuilder:rbac:groups=flowcontrol.apf-operator.io,resources=requestpriorities;flowschemas,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=flowcontrol.apf-operator.io,resources=requestpriorities/status;flowschemas/status,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// The projection (enforcement native) reads kube-apiserver's native flowcontrol objects and
// writes only its own, with server-side apply (patch; create for the first apply).
// +kubebuilder:rbac:groups=flowcontrol.apiserver.k8s.io,resources=prioritylevelconfigurations;flowschemas,verbs=get;list;watch;create;patch;delete

// DefaultResyncPeriod is how often the defaults reconciler re-checks the cluster when no change
// triggers it and Options.ResyncPeriod is zero.
const DefaultResyncPeriod = 10 * time.Minute

// eventRecorderName is the reporting controller of the operator's events.
const eventRecorderName = "apf-operator"

// Enforcement modes: how the managed configuration reaches kube-apiserver.
const (
	// EnforcementNative projects the configuration onto kube-apiserver's own
	// flowcontrol.apiserver.k8s.io/v1 objects, which it enforces (internal/native).
	EnforcementNative = "native"
	// EnforcementNone manages and validates the configuration only, and deletes the native
	// objects a native run of the operator left (nativePruner).
	EnforcementNone = "none"
)

// Options configures the reconcilers.
type Options struct {
	// Enforcement is EnforcementNative or EnforcementNone; empty means EnforcementNative.
	Enforcement string
	// NativeMaxSeatLossPercent is the most (0 to 90) that kube-apiserver's own priority levels
	// may lose of their share of the server to the projected levels (native.Existing); nil
	// means budget.DefaultMaxLossPercent.
	NativeMaxSeatLossPercent *int32
	// NativeSeatsPeriod is how often the leader reads kube-apiserver's /metrics for the nominal
	// seats of the native levels (RequestPriority status.nativeNominalSeats, and the server
	// concurrency limit the share budget rounds with); zero means DefaultNativeSeatsPeriod,
	// negative turns the reading off.
	NativeSeatsPeriod time.Duration
	// NativeUnmatched says what classifies the requests no projected FlowSchema matches, with
	// enforcement native; "" means native.UnmatchedKubeAPIServer.
	NativeUnmatched native.Unmatched
	// ManageDefaults turns the defaults reconciler on. Off, the operator only reports status.
	ManageDefaults bool
	// ResyncPeriod is how often the defaults reconciler re-checks the cluster without a
	// triggering change; zero or negative means DefaultResyncPeriod.
	ResyncPeriod time.Duration
	// Clock stamps condition transition times and times the defaults reconciler's wait for its
	// own writes; nil means the real clock.
	Clock clock.PassiveClock
	// Registerer receives the defaults metrics (the manager passes controller-runtime's
	// metrics.Registry, tests a fresh registry); nil means the metrics are not exported.
	Registerer prometheus.Registerer
	// EventRateLimit is the engine of the events webhook that the EventRateLimit objects
	// configure; nil means the webhook is off (the objects' status says so).
	EventRateLimit *eventratelimit.Engine
	// EventRateLimitDeployment, when set, is the operator's Deployment: every replica divides
	// the limits by its ready replicas (EventRateLimitDivide).
	EventRateLimitDeployment types.NamespacedName
	// EventRateLimitStatusPeriod is how often enforced objects' counts are written; zero means
	// DefaultEventRateLimitStatusPeriod.
	EventRateLimitStatusPeriod time.Duration
	// Operator, when set, is the operator's own service account: with enforcement native its
	// requests get their own route ahead of every projected schema (native.OperatorRouteName).
	Operator *native.ServiceAccount
	// AutopilotInterval is how often the leader steps the autopilot's loop (enforcement native
	// only); zero means DefaultAutopilotInterval, negative turns the autopilot off.
	AutopilotInterval time.Duration
}

// SetupWithManager registers every reconciler with mgr. The cache indexes of internal/index
// must be registered before (main.go calls index.Register first).
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	opts = opts.withDefaults()
	if opts.Enforcement != EnforcementNative && opts.Enforcement != EnforcementNone {
		return fmt.Errorf("enforcement %q is not one of %q, %q", opts.Enforcement, EnforcementNative, EnforcementNone)
	}
	project := opts.Enforcement == EnforcementNative
	duration, err := newSnapshotDuration(opts.Registerer)
	if err != nil {
		return fmt.Errorf("registering the snapshot metrics: %w", err)
	}
	snaps := newSnapshotHolder(mgr.GetCache(), project, duration)
	snaps.operator = opts.Operator
	snaps.maxSeatLoss = opts.NativeMaxSeatLossPercent
	if project && opts.NativeSeatsPeriod >= 0 {
		if snaps.seats, err = newSeatReader(mgr.GetConfig()); err != nil {
			return err
		}
		snaps.seatsPeriod = cmp.Or(opts.NativeSeatsPeriod, DefaultNativeSeatsPeriod)
	}
	snaps.unmatched = opts.NativeUnmatched
	fleet, err := newFleetMetrics(opts.Registerer)
	if err != nil {
		return fmt.Errorf("registering the fleet metrics: %w", err)
	}
	snaps.subscribe(fleet.record)
	if err := mgr.Add(snaps); err != nil {
		return fmt.Errorf("adding the effective configuration's snapshots: %w", err)
	}
	recorder := mgr.GetEventRecorder(eventRecorderName)
	rpr := &requestPriorityReconciler{client: mgr.GetClient(), recorder: recorder, clock: opts.Clock, snapshots: snaps}
	if err := rpr.setup(mgr); err != nil {
		return fmt.Errorf("setting up the RequestPriority status reconciler: %w", err)
	}
	fsr := &flowSchemaReconciler{client: mgr.GetClient(), recorder: recorder, clock: opts.Clock, snapshots: snaps}
	if err := fsr.setup(mgr); err != nil {
		return fmt.Errorf("setting up the FlowSchema status reconciler: %w", err)
	}
	if err := setupEventRateLimit(mgr, recorder, opts); err != nil {
		return err
	}
	if project {
		if err := setupProjector(mgr, recorder, snaps, opts); err != nil {
			return err
		}
		if err := setupAutopilot(mgr, recorder, snaps, opts); err != nil {
			return err
		}
	} else if err := (&nativePruner{client: mgr.GetClient()}).setup(mgr); err != nil {
		return fmt.Errorf("setting up the native objects' pruner: %w", err)
	}
	if !opts.ManageDefaults {
		return nil
	}
	metrics, err := newDefaultsMetrics(opts.Registerer)
	if err != nil {
		return fmt.Errorf("registering the defaults metrics: %w", err)
	}
	r := newDefaultsReconciler(mgr.GetClient(), recorder, metrics, opts)
	if err := r.setup(mgr); err != nil {
		return fmt.Errorf("setting up the defaults reconciler: %w", err)
	}
	return nil
}

// setupEventRateLimit registers the EventRateLimit status reconciler and, with an engine, the
// reconciler that configures it and the replica divider.
func setupEventRateLimit(mgr ctrl.Manager, recorder events.EventRecorder, opts Options) error {
	st := &eventRateLimitStatus{client: mgr.GetClient(), recorder: recorder, clock: opts.Clock,
		engine: opts.EventRateLimit, period: opts.EventRateLimitStatusPeriod}
	if err := st.setup(mgr); err != nil {
		return fmt.Errorf("setting up the EventRateLimit status reconciler: %w", err)
	}
	if opts.EventRateLimit == nil {
		return nil
	}
	cfg := &eventRateLimitConfig{client: mgr.GetClient(), engine: opts.EventRateLimit}
	if err := cfg.setup(mgr); err != nil {
		return fmt.Errorf("setting up the EventRateLimit configuration reconciler: %w", err)
	}
	if opts.EventRateLimitDeployment.Name == "" {
		return nil
	}
	return mgr.Add(&replicaDivider{reader: mgr.GetAPIReader(), deployment: opts.EventRateLimitDeployment,
		engine: opts.EventRateLimit, period: replicaPollPeriod})
}

func setupProjector(mgr ctrl.Manager, recorder events.EventRecorder, snaps *snapshotHolder, opts Options) error {
	metrics, err := newProjectionMetrics(opts.Registerer)
	if err != nil {
		return fmt.Errorf("registering the projection metrics: %w", err)
	}
	p := &projector{client: mgr.GetClient(), recorder: recorder, snapshots: snaps, metrics: metrics,
		pending: newExpectations(expectationTimeout, opts.Clock), inFlight: newInFlight()}
	if err := p.setup(mgr); err != nil {
		return fmt.Errorf("setting up the projection controller: %w", err)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.Enforcement == "" {
		o.Enforcement = EnforcementNative
	}
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = DefaultResyncPeriod
	}
	if o.EventRateLimitStatusPeriod <= 0 {
		o.EventRateLimitStatusPeriod = DefaultEventRateLimitStatusPeriod
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	return o
}
