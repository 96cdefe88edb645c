package controllers

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apfmetrics"
	"github.com/apf-operator/apf-operator/internal/autopilot"
	"github.com/apf-operator/apf-operator/internal/native"
)

// DefaultAutopilotInterval is how often the leader runs the autopilot's loop when
// Options.AutopilotInterval is zero; MinAutopilotInterval the shortest interval allowed.
const (
	DefaultAutopilotInterval = 5 * time.Minute
	MinAutopilotInterval     = 15 * time.Second
)

// The autopilot writes its record into the RequestPriorities' status with a merge patch.
// +kubebuilder:rbac:groups=flowcontrol.apf-operator.io,resources=requestpriorities/status,verbs=patch

// autopilotRunner is the opt-in closed loop (docs/autopilot-loop.md): on the leader, every
// interval, it reads kube-apiserver's flow-control metrics, hands the window since the last
// read to autopilot.Loop for the pool (the RequestPriorities with spec.autopilot), and records
// the step in their status.autopilot, from which the projection takes the applied shares.
// Only its Start goroutine uses the fields below the clock.
type autopilotRunner struct {
	client client.Client
	// reader reads an object afresh after a conflict (the manager's API reader).
	reader   client.Reader
	recorder events.EventRecorder
	// fetch reads kube-apiserver's /metrics (seatReader's fetch: one replica, through the
	// Service); replicas, when set, reads every replica instead (autopilot_replicas.go).
	fetch    func(ctx context.Context) ([]byte, error)
	replicas *replicaSource
	clock    clock.WithTicker
	interval time.Duration
	cfg      autopilot.Config
	steps    *autopilotMetrics

	// loop is the pool's loop, made for pool (autopilot.Pool of its configured shares); nil
	// until the first tick with a pool.
	loop *autopilot.Loop
	pool string
	// prev is the last read of the metrics; nil after a failed read.
	prev *apfmetrics.Snapshot
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: only the leader steps.
func (r *autopilotRunner) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable: it steps at once (which reads the first metrics: a new
// leader's first window is incomplete, so it never changes anything across a leader change),
// then every interval until ctx ends.
func (r *autopilotRunner) Start(ctx context.Context) error {
	log := logf.FromContext(ctx).WithName("autopilot")
	ctx = logf.IntoContext(ctx, log)
	tick := r.clock.NewTicker(r.interval)
	defer tick.Stop()
	for {
		if err := r.tick(ctx); err != nil {
			log.Error(err, "Autopilot step failed; retrying at the next interval")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C():
		}
	}
}

// tick runs one step of the loop.
func (r *autopilotRunner) tick(ctx context.Context) error {
	var list flowv1.RequestPriorityList
	if err := r.client.List(ctx, &list); err != nil {
		return fmt.Errorf("listing RequestPriorities: %w", err)
	}
	if err := r.clearOutsidePool(ctx, list.Items); err != nil {
		return err
	}
	members := poolMembers(list.Items)
	if len(members) == 0 {
		r.loop, r.pool, r.prev = nil, "", nil
		return nil
	}
	now := r.clock.Now()
	configured := poolShares(list.Items)
	pool := autopilot.Pool(configured)
	applied := appliedShares(list.Items, nil)
	if r.loop == nil || pool != r.pool {
		r.loop, r.pool = autopilot.NewLoop(r.cfg, resumeMemory(members, pool)), pool
	}
	levels := poolLevels(members, applied)
	w, measurable, left := r.window(ctx, now, levels)
	before := r.loop.Memory()
	step := r.loop.Observe(now, measurable, w)
	r.steps.count(w, step)
	if step.Changed {
		logf.FromContext(ctx).Info("Autopilot changed the pool's applied shares", "state", step.State,
			"applied", step.Applied, "message", step.Message)
	}
	return r.record(ctx, members, levels, step, before, left)
}

// window reads the metrics and returns the window since the previous read, the levels it
// measures and, by level, why the others are left out of the pool (autopilot.Measurable); a
// failed read makes it (and the next one) incomplete.
func (r *autopilotRunner) window(ctx context.Context, now time.Time, levels []autopilot.Level) (autopilot.Window, []autopilot.Level, map[string]string) {
	cur, err := r.read(ctx, now)
	prev := r.prev
	r.prev = cur
	if err != nil {
		return autopilot.Window{End: now, Incomplete: fmt.Sprintf("cannot read kube-apiserver's /metrics: %v", err)}, levels, nil
	}
	measurable, left := autopilot.Measurable(levels, cur)
	names := make([]string, len(measurable))
	for i, l := range measurable {
		names[i] = l.Name
	}
	return autopilot.WindowFrom(r.cfg, prev, cur, names), measurable, left
}

// read reads kube-apiserver's flow-control metrics once: every replica's, merged, when they
// can be found, else the one replica behind the Service.
func (r *autopilotRunner) read(ctx context.Context, now time.Time) (*apfmetrics.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, nativeSeatsTimeout)
	defer cancel()
	if snap, ok, err := r.replicas.read(ctx, now); ok {
		return snap, err
	}
	raw, err := r.fetch(ctx)
	if err != nil {
		return nil, err
	}
	families, err := apfmetrics.Parse(raw, apfmetrics.Prefix)
	if err != nil {
		return nil, err
	}
	return apfmetrics.NewSnapshot(families, now), nil
}

// poolLevels are the pool's levels as they are configured now: the native level's name, the
// shares in force, the configured shares and the bounds.
func poolLevels(members []*flowv1.RequestPriority, applied map[string]int32) []autopilot.Level {
	out := make([]autopilot.Level, len(members))
	for i, rp := range members {
		a := rp.Spec.Autopilot
		out[i] = autopilot.Level{
			Name: native.NativeName(rp.Name), Object: rp.Name,
			Shares: inForce(applied, rp), ConfiguredShares: *rp.Spec.AssuredConcurrencyShares,
			LendablePercent: ptr.Deref(rp.Spec.LendablePercent, 0), BorrowingLimitPercent: rp.Spec.BorrowingLimitPercent,
			Bounds: autopilot.Bounds{MinShares: a.MinShares, MaxShares: a.MaxShares, MaxStepPercent: ptr.Deref(a.MaxStepPercent, 0)},
		}
	}
	return out
}

// resumeMemory is the loop's memory recorded in the members' status for pool (a new leader
// resumes from it); empty when the status is of another pool.
func resumeMemory(members []*flowv1.RequestPriority, pool string) autopilot.Memory {
	var mem autopilot.Memory
	for _, rp := range members {
		st := rp.Status.Autopilot
		if st == nil || st.Pool != pool {
			continue
		}
		if st.LastGoodShares != nil {
			if mem.LastGood == nil {
				mem.LastGood = map[string]int32{}
			}
			mem.LastGood[native.NativeName(rp.Name)] = *st.LastGoodShares
		}
		if st.LastChangeTime != nil && st.LastChangeTime.After(mem.LastChange) {
			mem.LastChange = st.LastChangeTime.Time
		}
		if st.FrozenUntil != nil && st.FrozenUntil.After(mem.FrozenUntil) {
			mem.FrozenUntil = st.FrozenUntil.Time
		}
	}
	return mem
}

// setupAutopilot adds the autopilot's loop to mgr unless opts turn it off. It reads
// kube-apiserver's /metrics through the native seats' reader.
func setupAutopilot(mgr ctrl.Manager, recorder events.EventRecorder, snaps *snapshotHolder, opts Options) error {
	if opts.AutopilotInterval < 0 {
		return nil
	}
	metrics, err := newAutopilotMetrics(opts.Registerer)
	if err != nil {
		return fmt.Errorf("registering the autopilot metrics: %w", err)
	}
	reader := snaps.seats
	if reader == nil {
		if reader, err = newSeatReader(mgr.GetConfig()); err != nil {
			return err
		}
	}
	r := &autopilotRunner{client: mgr.GetClient(), reader: mgr.GetAPIReader(), recorder: recorder, fetch: reader.fetch,
		replicas: newReplicaSource(mgr.GetConfig(), mgr.GetAPIReader()),
		clock:    clock.RealClock{}, interval: cmp.Or(opts.AutopilotInterval, DefaultAutopilotInterval),
		cfg: autopilot.DefaultConfig(), steps: metrics}
	if err := mgr.Add(r); err != nil {
		return fmt.Errorf("adding the autopilot: %w", err)
	}
	return nil
}
