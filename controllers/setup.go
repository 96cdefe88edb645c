package controllers

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The permissions the reconcilers use, and no more: they read both kinds through the cache,
// create defaults, repair them with a JSON patch, write status with an update (optimistic
// concurrency), and record events (the events.k8s.io recorder creates, then patches a series).
// The operator never deletes.
// +kubebuilder:rbac:groups=flowcontrol.apf-operator.io,resources=requestpriorities;flowschemas,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=flowcontrol.apf-operator.io,resources=requestpriorities/status;flowschemas/status,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// DefaultResyncPeriod is how often the defaults reconciler re-checks the cluster when no change
// triggers it and Options.ResyncPeriod is zero.
const DefaultResyncPeriod = 10 * time.Minute

// eventRecorderName is the reporting controller of the operator's events.
const eventRecorderName = "apf-operator"

// Options configures the reconcilers.
type Options struct {
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
}

// SetupWithManager registers every reconciler with mgr. The cache indexes of internal/index
// must be registered before (main.go calls index.Register first).
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	opts = opts.withDefaults()
	recorder := mgr.GetEventRecorder(eventRecorderName)
	if err := (&requestPriorityReconciler{client: mgr.GetClient(), recorder: recorder, clock: opts.Clock}).setup(mgr); err != nil {
		return fmt.Errorf("setting up the RequestPriority status reconciler: %w", err)
	}
	if err := (&flowSchemaReconciler{client: mgr.GetClient(), recorder: recorder, clock: opts.Clock}).setup(mgr); err != nil {
		return fmt.Errorf("setting up the FlowSchema status reconciler: %w", err)
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

func (o Options) withDefaults() Options {
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = DefaultResyncPeriod
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	return o
}
