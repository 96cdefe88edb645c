package controllers

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/apf-operator/apf-operator/controllers/defaults"
	erlcontrollers "github.com/apf-operator/apf-operator/controllers/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
	"github.com/apf-operator/apf-operator/internal/native"
)

// DefaultResyncPeriod is how often the defaults reconciler re-checks the cluster when no change
// triggers it and Options.ResyncPeriod is zero (controllers/defaults).
const DefaultResyncPeriod = defaults.DefaultResyncPeriod

// DefaultEventRateLimitStatusPeriod is how often the counts of an EventRateLimit's status are
// refreshed while events flow, when Options.EventRateLimitStatusPeriod is zero
// (controllers/eventratelimit).
const DefaultEventRateLimitStatusPeriod = erlcontrollers.DefaultStatusPeriod

// Replica modes of the EventRateLimit buckets (--event-rate-limit-replicas).
const (
	// EventRateLimitDivide divides every limit by the ready replicas of the operator's
	// Deployment (Options.EventRateLimitDeployment), so that the cluster-wide rate is the
	// configured one (the default).
	EventRateLimitDivide = "divide"
	// EventRateLimitPerReplica gives every replica the full limits: the cluster-wide rate is
	// up to replicas × qps.
	EventRateLimitPerReplica = "perReplica"
)

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
	// NativeSeatsPeriod is how often the leader reads kube-apiserver's /metrics: the nominal
	// seats of the native levels (RequestPriority status.nativeNominalSeats), the server
	// concurrency limit the share budget rounds with, and the rejection counters that
	// status.observed summarises at most every second period; zero means
	// DefaultNativeSeatsPeriod, negative turns the reading off.
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
	// Registerer receives the operator's metrics (listed in the docs of this package and of
	// controllers/defaults; the manager passes controller-runtime's metrics.Registry, tests a
	// fresh registry); nil means the metrics are not exported.
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

	// quiet shortens the snapshot's and the users' quiet periods; only this package's tests
	// set it (production: zero, the constants).
	quiet quietPeriods
}

func (o Options) withDefaults() Options {
	if o.Enforcement == "" {
		o.Enforcement = EnforcementNative
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	return o
}
