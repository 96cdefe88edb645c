package eventratelimit

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/apf-operator/apf-operator/internal/eventratelimit"
)

// The EventRateLimit reconcilers read the objects through the cache and write their status.
// +kubebuilder:rbac:groups=flowcontrol.apf-operator.io,resources=eventratelimits,verbs=get;list;watch
// +kubebuilder:rbac:groups=flowcontrol.apf-operator.io,resources=eventratelimits/status,verbs=update

// DefaultStatusPeriod is how often the counts of an EventRateLimit's status are refreshed
// while events flow: the status is written at most this often, never per event.
const DefaultStatusPeriod = 10 * time.Second

// Options configures the EventRateLimit reconcilers.
type Options struct {
	// Engine is the events webhook's engine that the objects configure; nil means the webhook
	// is off (the objects' status says so).
	Engine *eventratelimit.Engine
	// Deployment, when set, is the operator's Deployment: every replica divides the limits by
	// its ready replicas.
	Deployment types.NamespacedName
	// StatusPeriod is how often enforced objects' counts are written; zero or negative means
	// DefaultStatusPeriod.
	StatusPeriod time.Duration
	// Clock stamps condition transition times; nil means the real clock.
	Clock clock.PassiveClock
}

// SetupWithManager registers the status reconciler and, with an engine, the reconciler that
// configures it and (with a Deployment) the replica divider; it records events with recorder.
func SetupWithManager(mgr ctrl.Manager, recorder events.EventRecorder, opts Options) error {
	if opts.StatusPeriod <= 0 {
		opts.StatusPeriod = DefaultStatusPeriod
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	st := &statusReconciler{client: mgr.GetClient(), recorder: recorder, clock: opts.Clock,
		engine: opts.Engine, period: opts.StatusPeriod}
	if err := st.setup(mgr); err != nil {
		return fmt.Errorf("setting up the EventRateLimit status reconciler: %w", err)
	}
	if opts.Engine == nil {
		return nil
	}
	cfg := &configReconciler{client: mgr.GetClient(), engine: opts.Engine}
	if err := cfg.setup(mgr); err != nil {
		return fmt.Errorf("setting up the EventRateLimit configuration reconciler: %w", err)
	}
	if opts.Deployment.Name == "" {
		return nil
	}
	return mgr.Add(&replicaDivider{reader: mgr.GetAPIReader(), deployment: opts.Deployment,
		engine: opts.Engine, period: replicaPollPeriod})
}
