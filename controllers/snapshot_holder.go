package controllers

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
)

// The holder's coalescing delays. A burst of changes (a GitOps sync applying thousands of
// objects) is computed when it pauses for snapshotQuiet, and at least every snapshotMaxDelay
// while it lasts; between two computations the holder also waits twice as long as the last
// one took, so computing never takes more than a third of a CPU however large the
// configuration. So a bulk apply writes each object's status and native object about once
// (after the burst), not for each of its intermediate states (a RequestPriority's count of
// FlowSchemas as they arrive, a native precedence reassigned as gaps fill up), at the price
// of a status and a projection that lag a change by snapshotQuiet.
const (
	snapshotQuiet    = 2 * time.Second
	snapshotMaxDelay = 30 * time.Second
)

// snapshotHolder computes the snapshot of the cache after each burst of changes and publishes
// it atomically to its subscribers: the status reconcilers enqueue the objects whose view
// changed, the projector re-plans. A reconcile reads the current snapshot and never lists the
// cache, so a bulk apply costs a bounded number of computations, not one per object.
type snapshotHolder struct {
	project bool
	cache   cache.Cache
	// operator is the operator's own service account, routed by the projection (nil: none).
	operator *native.ServiceAccount
	// maxSeatLoss is native.Existing.MaxSeatLossPercent.
	maxSeatLoss *int32
	// seats reads kube-apiserver's native seats every seatsPeriod (nil: not read).
	seats       *seatReader
	seatsPeriod time.Duration
	seatsDue    chan struct{} // capacity 1: readSeatsSoon
	// unmatched is the projection's choice for unmatched requests (Options.NativeUnmatched).
	unmatched native.Unmatched

	current  atomic.Pointer[snapshot]
	changed  chan struct{} // capacity 1: changes not yet computed
	duration prometheus.Histogram
	// midBurst is whether the burst being waited for had not paused when the next snapshot is
	// computed (it lasted snapshotMaxDelay) and the users' objects changed in its last
	// snapshotQuiet; only the Start goroutine uses it.
	midBurst bool
	// changes records when the users' objects last changed (userQuiet).
	changes changeClock
	// projected records when the projector last wrote a native object (projectionWait).
	projected progressClock

	mu          sync.Mutex
	subscribers []func(old, cur *snapshot)
}

func newSnapshotHolder(c cache.Cache, project bool, duration prometheus.Histogram) *snapshotHolder {
	return &snapshotHolder{project: project, cache: c, duration: duration, changed: make(chan struct{}, 1),
		seatsDue: make(chan struct{}, 1)}
}

// projectionWait is v.projectionWait now, given the projector's progress.
func (h *snapshotHolder) projectionWait(v objectView) time.Duration {
	now := time.Now()
	return v.projectionWait(now, h.projected.progressing(now))
}

// deferred is snap.deferred now, with the users' quiet period; it counts wall time, whatever
// clock stamps the conditions.
func (h *snapshotHolder) deferred(snap *snapshot, obj metav1.Object, w statusWrite) (bool, time.Duration) {
	now := time.Now()
	return snap.deferred(obj, w, h.changes.quietLeft(now), now)
}

// get returns the current snapshot; nil until the first one is computed.
func (h *snapshotHolder) get() *snapshot { return h.current.Load() }

// subscribe calls fn with every published snapshot and the one before it, from the holder's
// goroutine (fn must not block); if a snapshot exists already, fn first gets (nil, it).
func (h *snapshotHolder) subscribe(fn func(old, cur *snapshot)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subscribers = append(h.subscribers, fn)
	if cur := h.current.Load(); cur != nil {
		fn(nil, cur)
	}
}

// source is a controller source that enqueues the names pick returns for each snapshot.
func (h *snapshotHolder) source(pick func(old, cur *snapshot) []string) source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		h.subscribe(func(old, cur *snapshot) {
			for _, name := range pick(old, cur) {
				q.Add(reconcile.Request{NamespacedName: client.ObjectKey{Name: name}})
			}
		})
		return nil
	})
}

func (h *snapshotHolder) publish(cur *snapshot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	old := h.current.Swap(cur)
	for _, fn := range h.subscribers {
		fn(old, cur)
	}
}

// Start implements manager.Runnable: it watches what the snapshot depends on, computes the
// first snapshot once the cache has synced, then one per burst of changes until ctx ends.
func (h *snapshotHolder) Start(ctx context.Context) error {
	if err := h.watch(ctx); err != nil {
		return err
	}
	if !h.cache.WaitForCacheSync(ctx) {
		return ctx.Err()
	}
	log := logf.FromContext(ctx).WithName("snapshot")
	ctx = logf.IntoContext(ctx, log)
	h.startSeats(ctx)
	// Users may be applying objects while the operator starts: the first snapshot is then
	// mid-burst too.
	h.midBurst = h.changes.changedWithin(time.Now(), h.changes.quiet.snapshotOrDefault())
	for {
		spent, err := h.compute(ctx)
		if err != nil {
			log.Error(err, "Computing the effective configuration; retrying")
			h.signal()
		}
		if !h.awaitBurst(ctx, spent) {
			return nil
		}
	}
}

// awaitBurst waits for a change, then for the burst it starts to pause (snapshotQuiet without
// a change) or to last snapshotMaxDelay, and at least 2×spent; false when ctx ended. A pause
// of the users' changes ends the burst too, however many native objects change meanwhile: the
// projector's own writes of a bulk apply must not hold back the snapshot (and the projection)
// of the users' last objects until snapshotMaxDelay.
func (h *snapshotHolder) awaitBurst(ctx context.Context, spent time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-h.changed:
	}
	start := time.Now()
	deadline := start.Add(snapshotMaxDelay)
	var listed time.Time // users' changes after it are not in the current snapshot
	if cur := h.get(); cur != nil {
		listed = cur.listedAt
	}
	quiet := h.changes.quiet.snapshotOrDefault()
	paused := false
	// Mid-burst is about the users' changes: a burst of the projector's own native writes
	// defers no status.
	defer func() { h.midBurst = !paused && h.changes.changedWithin(time.Now(), quiet) }()
	for !paused {
		wait := min(quiet, time.Until(deadline))
		if quietAt, changed := h.changes.quietAfter(listed); changed {
			untilQuiet := time.Until(quietAt)
			if untilQuiet <= 0 {
				paused = true
				break
			}
			wait = min(wait, untilQuiet)
		}
		if wait <= 0 {
			break
		}
		select {
		case <-ctx.Done():
			return false
		case <-h.changed: // the burst goes on
		case <-time.After(wait):
			paused = wait == quiet // else the deadline came, or the users' pause (checked above)
		}
	}
	if rest := 2*spent - time.Since(start); rest > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(rest):
		}
	}
	return true
}

func (h *snapshotHolder) signal() {
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// compute lists the cache without copying (effective.Compute and native.Project do not modify
// their arguments, and the snapshot is read-only) and publishes the snapshot.
func (h *snapshotHolder) compute(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	var rps flowv1.RequestPriorityList
	if err := h.cache.List(ctx, &rps, client.UnsafeDisableDeepCopy); err != nil {
		return 0, err
	}
	var fss flowv1.FlowSchemaList
	if err := h.cache.List(ctx, &fss, client.UnsafeDisableDeepCopy); err != nil {
		return 0, err
	}
	var natives *native.Existing
	if h.project {
		var err error
		if natives, err = h.listNatives(ctx, fss.Items); err != nil {
			return 0, err
		}
		natives.ExemptAuthorized = native.ExemptRecordOf(fss.Items)
		natives.Created = createdTimes(rps.Items)
	}
	prev := h.get()
	snap := buildSnapshot(rps.Items, fss.Items, natives, prev, time.Now())
	snap.applySeats(h.seats.get())
	snap.applyTraffic(h.seats.traffic())
	if levelsChanged(prev, snap) {
		h.readSeatsSoon() // kube-apiserver's seats follow its levels
	}
	snap.midBurst, snap.listedAt = h.midBurst, start
	logOperatorRoute(ctx, prev, snap)
	h.publish(snap)
	took := time.Since(start)
	h.duration.Observe(took.Seconds())
	// One line per burst of changes: when statuses and projections were decided.
	logf.FromContext(ctx).Info("Computed the effective configuration", "seconds", took.Seconds(),
		"midBurst", snap.midBurst, "requestPriorities", len(rps.Items), "flowSchemas", len(fss.Items))
	return took, nil
}

// listNatives lists the native objects; ours are the operator's FlowSchemas, among which the
// owned defaults that are withheld from projection (internal/defaults.Withheld).
func (h *snapshotHolder) listNatives(ctx context.Context, ours []flowv1.FlowSchema) (*native.Existing, error) {
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err := h.cache.List(ctx, &plcs, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	var fss flowcontrolv1.FlowSchemaList
	if err := h.cache.List(ctx, &fss, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	existing := &native.Existing{PriorityLevels: plcs.Items, FlowSchemas: fss.Items, Operator: h.operator,
		MaxSeatLossPercent: h.maxSeatLoss, Unmatched: h.unmatched, Withheld: defaults.Withheld(ours)}
	if seats := h.seats.get(); seats != nil {
		existing.ServerConcurrencyLimit = seats.budgetLimit
	}
	return existing, nil
}

// watch signals a change on what the snapshot depends on: the spec (generation) of our
// objects, and, when the operator projects, the native objects' spec and ownership
// (sameForSnapshot). Only the changes of our objects are the users' (changes): the native
// objects change mostly by the projection.
func (h *snapshotHolder) watch(ctx context.Context) error {
	kinds := []watched{{&flowv1.RequestPriority{}, true}, {&flowv1.FlowSchema{}, true}}
	if h.project {
		kinds = append(kinds, watched{&flowcontrolv1.PriorityLevelConfiguration{}, false},
			watched{&flowcontrolv1.FlowSchema{}, false})
	}
	for _, k := range kinds {
		inf, err := h.cache.GetInformer(ctx, k.obj)
		if err != nil {
			return fmt.Errorf("watching %T for the effective configuration: %w", k.obj, err)
		}
		if _, err := inf.AddEventHandler(h.handler(k.specOnly)); err != nil {
			return fmt.Errorf("watching %T for the effective configuration: %w", k.obj, err)
		}
	}
	return nil
}

// watched is a kind the holder watches; specOnly ignores updates that keep the generation.
type watched struct {
	obj      client.Object
	specOnly bool
}

// handler signals every change; specOnly is set for our kinds, whose changes it also records
// as the users'.
func (h *snapshotHolder) handler(specOnly bool) toolscache.ResourceEventHandler {
	changed := h.signal
	if specOnly {
		changed = func() {
			h.changes.record(time.Now())
			h.signal()
		}
	}
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, isInInitialList bool) {
			if isInInitialList {
				h.signal() // what existed when the operator started: no user is changing it now
				return
			}
			changed()
		},
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(client.Object)
			c, ok2 := cur.(client.Object)
			if ok1 && ok2 && sameForSnapshot(o, c, specOnly) {
				return // a resync, or a status or metadata write: the configuration is the same
			}
			if ok1 && ok2 && specOnly && o.GetGeneration() == c.GetGeneration() {
				h.signal() // the autopilot's applied shares: the leader's write, not the users'
				return
			}
			changed()
		},
		DeleteFunc: func(any) { changed() },
	}
}

// sameForSnapshot reports whether an update leaves what the snapshot reads unchanged: a
// resync; for our kinds (specOnly) the same generation, the same ownership by the operator
// (defaults.Owned) and, for a RequestPriority, the same autopilot shares and pool in its status
// (the projection applies them); for a native object the same
// generation, labels and annotations (the projection checks its spec and ownership, not its
// status, which kube-apiserver's own flowcontrol controller keeps writing: during a bulk apply
// those writes would otherwise hold the holder mid-burst until snapshotMaxDelay). A change of
// managedFields alone (another manager applying the values already there) shows in the next
// snapshot computed for another reason.
func sameForSnapshot(old, cur client.Object, specOnly bool) bool {
	switch {
	case old.GetResourceVersion() == cur.GetResourceVersion():
		return true
	case old.GetGeneration() != cur.GetGeneration():
		return false
	case specOnly:
		// Ownership decides whether a default FlowSchema is withheld (defaults.Withheld).
		return sameAutopilotShares(old, cur) && sameExemptRecord(old, cur) && defaults.Owned(old) == defaults.Owned(cur)
	}
	return maps.Equal(old.GetLabels(), cur.GetLabels()) && maps.Equal(old.GetAnnotations(), cur.GetAnnotations())
}

// sameAutopilotShares reports whether two versions of an object of ours hold the same
// status.autopilot.{appliedShares,pool} (always true of a FlowSchema).
func sameAutopilotShares(old, cur client.Object) bool {
	o, ok1 := old.(*flowv1.RequestPriority)
	c, ok2 := cur.(*flowv1.RequestPriority)
	if !ok1 || !ok2 {
		return true
	}
	oShares, oPool := autopilotRecord(o)
	cShares, cPool := autopilotRecord(c)
	return ptr.Equal(oShares, cShares) && oPool == cPool
}

// autopilotRecord is what the projection reads of a RequestPriority's status.autopilot.
func autopilotRecord(rp *flowv1.RequestPriority) (*int32, string) {
	if rp.Status.Autopilot == nil {
		return nil, ""
	}
	return rp.Status.Autopilot.AppliedShares, rp.Status.Autopilot.Pool
}

// createdTimes is native.Existing.Created: the RequestPriorities' creation times, by name.
func createdTimes(rps []flowv1.RequestPriority) map[string]time.Time {
	out := make(map[string]time.Time, len(rps))
	for i := range rps {
		out[rps[i].Name] = rps[i].CreationTimestamp.Time
	}
	return out
}
