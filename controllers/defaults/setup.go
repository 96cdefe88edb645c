package defaults

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The defaults reconciler reads both kinds through the cache, creates the defaults, repairs
// them with a JSON patch and deletes only an unbound default RequestPriority that it created,
// to create it again bound (replacement, internal/defaults).
// +kubebuilder:rbac:groups=flowcontrol.apf-operator.io,resources=requestpriorities;flowschemas,verbs=get;list;watch;create;patch;delete

// DefaultResyncPeriod is how often the reconciler re-checks the cluster when no change
// triggers it and Options.ResyncPeriod is zero.
const DefaultResyncPeriod = 10 * time.Minute

// Options configures the defaults reconciler.
type Options struct {
	// Enforcement is the operator's enforcement mode ("native" or "none"); the defaults are
	// the same in every mode (internal/defaults.Default).
	Enforcement string
	// ResyncPeriod is how often the reconciler re-checks the cluster without a triggering
	// change; zero or negative means DefaultResyncPeriod.
	ResyncPeriod time.Duration
	// Clock times the wait for the reconciler's own writes; nil means the real clock.
	Clock clock.PassiveClock
	// Registerer receives the metrics (NewMetrics); nil means they are not exported.
	Registerer prometheus.Registerer
}

// SetupWithManager registers the defaults reconciler and its metrics with mgr; it records its
// events with recorder.
func SetupWithManager(mgr ctrl.Manager, recorder events.EventRecorder, opts Options) error {
	if opts.ResyncPeriod <= 0 {
		opts.ResyncPeriod = DefaultResyncPeriod
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Registerer == nil {
		opts.Registerer = prometheus.NewRegistry()
	}
	metrics, err := NewMetrics(opts.Registerer)
	if err != nil {
		return fmt.Errorf("registering the defaults metrics: %w", err)
	}
	if err := newReconciler(mgr.GetClient(), recorder, metrics, opts).setup(mgr); err != nil {
		return fmt.Errorf("setting up the defaults reconciler: %w", err)
	}
	return nil
}
