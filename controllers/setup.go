package controllers

import (
	"cmp"
	"fmt"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/controllers/defaults"
	erlcontrollers "github.com/apf-operator/apf-operator/controllers/eventratelimit"
	"github.com/apf-operator/apf-operator/controllers/internal/reconcileutil"
)

// eventRecorderName is the reporting controller of the operator's events.
const eventRecorderName = "apf-operator"

// Every reconciler records events with the one recorder SetupWithManager makes (the
// events.k8s.io recorder creates, then patches a series).
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers every reconciler with mgr. The cache indexes of internal/index
// must be registered before: managerbase.New, which internal/operator and the suites use, does it.
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
	snaps.changes.quiet = opts.quiet
	snaps.operator = opts.Operator
	snaps.maxSeatLoss = opts.NativeMaxSeatLossPercent
	if project && opts.NativeSeatsPeriod >= 0 {
		if snaps.seats, err = newSeatReader(mgr.GetConfig()); err != nil {
			return err
		}
		snaps.seats.limits = &replicaLimits{source: newReplicaSource(mgr.GetConfig(), mgr.GetAPIReader())}
		snaps.seatsPeriod = cmp.Or(opts.NativeSeatsPeriod, DefaultNativeSeatsPeriod)
		snaps.seats.rejections.minInterval = summaryInterval(snaps.seatsPeriod)
		if snaps.seats.rejections.summaries, err = newSummariesCounter(opts.Registerer); err != nil {
			return fmt.Errorf("registering the rejection summary metric: %w", err)
		}
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
	rpr := &statusReconciler[*flowv1.RequestPriority]{kind: requestPriorityKind, client: mgr.GetClient(),
		recorder: recorder, clock: opts.Clock, snapshots: snaps}
	if err := rpr.setup(mgr); err != nil {
		return fmt.Errorf("setting up the RequestPriority status reconciler: %w", err)
	}
	fsr := &statusReconciler[*flowv1.FlowSchema]{kind: flowSchemaKind, client: mgr.GetClient(),
		recorder: recorder, clock: opts.Clock, snapshots: snaps}
	if err := fsr.setup(mgr); err != nil {
		return fmt.Errorf("setting up the FlowSchema status reconciler: %w", err)
	}
	if err := erlcontrollers.SetupWithManager(mgr, recorder, erlcontrollers.Options{Engine: opts.EventRateLimit,
		Deployment: opts.EventRateLimitDeployment, StatusPeriod: opts.EventRateLimitStatusPeriod, Clock: opts.Clock}); err != nil {
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
	return defaults.SetupWithManager(mgr, recorder, defaults.Options{Enforcement: opts.Enforcement,
		ResyncPeriod: opts.ResyncPeriod, Clock: opts.Clock, Registerer: opts.Registerer})
}

func setupProjector(mgr ctrl.Manager, recorder events.EventRecorder, snaps *snapshotHolder, opts Options) error {
	metrics, err := newProjectionMetrics(opts.Registerer)
	if err != nil {
		return fmt.Errorf("registering the projection metrics: %w", err)
	}
	p := &projector{client: mgr.GetClient(), recorder: recorder, snapshots: snaps, metrics: metrics,
		pending: reconcileutil.NewExpectations(reconcileutil.ExpectationTimeout, opts.Clock), inFlight: newInFlight()}
	if err := p.setup(mgr); err != nil {
		return fmt.Errorf("setting up the projection controller: %w", err)
	}
	return nil
}
