package controllers

import (
	"fmt"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native"
)

// snapshot is the effective configuration of the cached objects and, when the operator
// projects, its projection and the native objects it was computed against. It is computed once
// per burst of changes (snapshotHolder) and never modified afterwards: the status reconcilers
// and the projector read it concurrently.
type snapshot struct {
	cfg     *effective.Config
	plan    *native.Plan // nil when enforcement is none
	natives native.Existing
	// livePLCs and liveFSs index the native objects by name, planPLCs and planFSs the plan's.
	livePLCs, planPLCs map[string]*flowcontrolv1.PriorityLevelConfiguration
	liveFSs, planFSs   map[string]*flowcontrolv1.FlowSchema
	// rps and fss are what each object's status is computed from, by name.
	rps, fss map[string]objectView
	// listedAt is when the cache was listed for this snapshot: writes made after it may not
	// show in it.
	listedAt time.Time
	// midBurst is set when the snapshot was computed while a burst of changes went on (it
	// lasted snapshotMaxDelay without a pause): see deferred.
	midBurst bool
}

// objectVersion identifies the version of an object a view was computed from: a status is
// written only from a view of the object's current generation.
type objectVersion struct {
	uid        types.UID
	generation int64
}

// objectView is everything an object's status depends on besides the object itself.
type objectView struct {
	version objectVersion
	status  effective.Status
	// projection is the Projected condition's content, confirmed by the cluster; unset when
	// enforcement is none.
	projection native.Result
	// pendingSince is when the projection first showed reason Pending for this version.
	pendingSince time.Time
	// nativeSeats are the nominal seats of a projected RequestPriority's native level
	// (kube-apiserver's metrics); nil when unknown.
	nativeSeats *int32
	// rejected is how many requests kube-apiserver rejected at the object's native level or
	// FlowSchema over the last 5 minutes, read at observedAt (not compared: a new read with
	// the same count changes nothing); nil when unknown.
	rejected   *int64
	observedAt time.Time
}

// sameAs reports whether two views give the same status.
func (v objectView) sameAs(o objectView) bool {
	return v.version == o.version && v.status == o.status && equality.Semantic.DeepEqual(v.projection, o.projection) &&
		ptr.Equal(v.nativeSeats, o.nativeSeats) && ptr.Equal(v.rejected, o.rejected)
}

// buildSnapshot computes a snapshot; prev (possibly nil) carries the pendingSince of views
// still pending. It does not modify its arguments.
func buildSnapshot(rps []flowv1.RequestPriority, fss []flowv1.FlowSchema, natives *native.Existing,
	prev *snapshot, now time.Time) *snapshot {
	s := &snapshot{cfg: effective.Compute(rps, fss)}
	if natives != nil {
		s.natives = *natives
		s.natives.PlannedPrecedences = prev.plannedPrecedences()
		s.natives.AutopilotShares = appliedShares(rps, prev.autopilotShares())
		s.plan = native.Project(s.cfg, s.natives)
		s.indexNatives()
	}
	s.rps = make(map[string]objectView, len(rps))
	for i := range rps {
		rp := &rps[i]
		s.rps[rp.Name] = s.view(rp.UID, rp.Generation, s.cfg.RequestPriorityStatus[rp.Name],
			s.rpProjection(rp.Name), prev.rpViews()[rp.Name], now)
	}
	s.fss = make(map[string]objectView, len(fss))
	for i := range fss {
		fs := &fss[i]
		s.fss[fs.Name] = s.view(fs.UID, fs.Generation, s.cfg.FlowSchemaStatus[fs.Name],
			s.fsProjection(fs.Name), prev.fsViews()[fs.Name], now)
	}
	return s
}

// autopilotShares are the autopilot's applied shares the snapshot projected (nil without
// them or without a snapshot).
func (s *snapshot) autopilotShares() map[string]int32 {
	if s == nil {
		return nil
	}
	return s.natives.AutopilotShares
}

// plannedPrecedences are the precedences of the native FlowSchemas of s's plan (nil without
// one), which the next plan keeps for those whose writes it does not see yet.
func (s *snapshot) plannedPrecedences() map[string]int32 {
	if s == nil || s.plan == nil {
		return nil
	}
	out := make(map[string]int32, len(s.plan.FlowSchemas))
	for i := range s.plan.FlowSchemas {
		out[s.plan.FlowSchemas[i].Name] = s.plan.FlowSchemas[i].Spec.MatchingPrecedence
	}
	return out
}

func (s *snapshot) view(uid types.UID, generation int64, st effective.Status, projection native.Result,
	prev objectView, now time.Time) objectView {
	v := objectView{version: objectVersion{uid: uid, generation: generation}, status: st, projection: projection}
	if projection.Reason == flowv1.ReasonPending {
		v.pendingSince = now
		if prev.version == v.version && !prev.pendingSince.IsZero() {
			v.pendingSince = prev.pendingSince
		}
	}
	return v
}

func (s *snapshot) indexNatives() {
	s.livePLCs, s.liveFSs = indexByName(s.natives.PriorityLevels), indexByName(s.natives.FlowSchemas)
	s.planPLCs, s.planFSs = indexByName(s.plan.PriorityLevels), indexByName(s.plan.FlowSchemas)
}

// indexByName maps the name of every item to the item itself (in items).
func indexByName[T any, PT interface {
	*T
	GetName() string
}](items []T) map[string]PT {
	m := make(map[string]PT, len(items))
	for i := range items {
		p := PT(&items[i])
		m[p.GetName()] = p
	}
	return m
}

// rpProjection is the Projected condition's content of a RequestPriority.
func (s *snapshot) rpProjection(name string) native.Result {
	if s.plan == nil {
		return native.Result{}
	}
	res, found := s.plan.RequestPriorities[name]
	if !found {
		return notInEffect()
	}
	if !res.Projected || res.NativeName == native.ExemptLevelName || res.Reason == flowv1.ReasonBound {
		return res // nothing is written for the exempt level nor for a bound one
	}
	if levelUpToDate(s.planPLCs[res.NativeName], s.livePLCs[res.NativeName]) {
		return res
	}
	return pendingResult(res.NativeName)
}

// fsProjection is the Projected condition's content of a FlowSchema.
func (s *snapshot) fsProjection(name string) native.Result {
	if s.plan == nil {
		return native.Result{}
	}
	res, found := s.plan.FlowSchemaResults[name]
	if !found {
		return notInEffect()
	}
	if !res.Projected || schemaUpToDate(s.planFSs[res.NativeName], s.liveFSs[res.NativeName]) {
		return res
	}
	return pendingResult(res.NativeName)
}

func notInEffect() native.Result {
	return native.Result{Reason: flowv1.ReasonNotInEffect, Message: "not projected: the object is not in effect"}
}

// pendingResult is the projection of an object whose native object does not hold the plan yet.
func pendingResult(nativeName string) native.Result {
	return native.Result{Reason: flowv1.ReasonPending, NativeName: nativeName, Message: fmt.Sprintf(
		"the native object %s is being written; if this lasts, see the Warning events of this object and the "+
			"operator's logs", nativeName)}
}

// changedNames lists the objects whose status may differ between two snapshots: new or
// changed views (a gone object has no status to write).
func changedNames(old, cur map[string]objectView) []string {
	var out []string
	for name, v := range cur {
		if o, ok := old[name]; !ok || !o.sameAs(v) {
			out = append(out, name)
		}
	}
	return out
}

// toEnqueue lists the objects whose status may differ between two snapshots: those of
// changedNames, and all of them when a burst of changes has ended (cur is the first snapshot
// after mid-burst ones), for the writes deferred while it went on.
func toEnqueue(old, cur *snapshot, oldViews, curViews map[string]objectView) []string {
	if old == nil || !old.midBurst || cur.midBurst {
		return changedNames(oldViews, curViews)
	}
	out := make([]string, 0, len(curViews))
	for name := range curViews {
		out = append(out, name)
	}
	return out
}

// firstStatusDeferral bounds how long a new object's first status waits for the end of a
// burst of changes or for the users' objects to be quiet (deferred), so that endless churn
// cannot keep it unwritten.
const firstStatusDeferral = 5 * time.Minute

// statusWrite describes a status write a reconciler is about to make, for deferred.
type statusWrite struct {
	// first is set when the object has no status yet (observedGeneration 0).
	first bool
	// figuresOnly is set when only an object's derived figures change (a RequestPriority's
	// seats and fraction, either kind's observed rejections).
	figuresOnly bool
	// danglingReference is set when the status reports a RequestPriority that does not exist.
	danglingReference bool
}

// deferred reports whether a status write waits, and when to retry it (0: a later snapshot
// enqueues the object). quietLeft is how long until the users' objects will have been quiet
// for userQuiet (changeClock.quietLeft). While GitOps applies many objects at once, in any
// order, a status computed meanwhile is soon outdated (docs/scale.md):
//   - In a snapshot computed mid-burst, a new object's first status (for up to
//     firstStatusDeferral after its creation) and a change of the derived figures alone wait
//     for the burst to end: the first snapshot after it enqueues every object (toEnqueue).
//   - Otherwise, until the users' objects have been quiet for userQuiet, a new FlowSchema's
//     first status that reports its RequestPriority missing waits (the RequestPriority is most
//     likely still to come; for up to firstStatusDeferral after the FlowSchema's creation).
//     Derived figures are not held back outside bursts: a single edit's figures are written
//     at once, and a restarted operator finds nothing left to write once the cluster settled.
//
// Every other write (a condition change of a written status, a first status that is Ready or
// wrong for another reason) is made at once.
func (s *snapshot) deferred(obj metav1.Object, w statusWrite, quietLeft time.Duration, now time.Time) (bool, time.Duration) {
	firstLeft := firstStatusDeferral - now.Sub(obj.GetCreationTimestamp().Time)
	switch {
	case s.midBurst && w.figuresOnly:
		return true, 0
	case s.midBurst && w.first:
		return firstLeft > 0, max(firstLeft, 0)
	case quietLeft <= 0:
		return false, 0
	case w.first && w.danglingReference && firstLeft > 0:
		return true, min(quietLeft, firstLeft)
	}
	return false, 0
}

// projectionPendingGrace is how long a status waits for the native object being written
// before it shows Projected reason Pending: a new object's status is then written once, with
// Projected=True, and a repaired native object causes no status write at all.
const projectionPendingGrace = 60 * time.Second

// projectionWait is how much longer the status of v waits for its native object at now; 0
// when it is not pending or has waited long enough. It waits projectionPendingGrace, and
// while the projector is making progress (projecting: a bulk apply's thousands of native
// writes take longer than the grace on a small control plane) up to firstStatusDeferral,
// re-checked every projectorProgressWindow.
func (v objectView) projectionWait(now time.Time, projecting bool) time.Duration {
	if v.pendingSince.IsZero() {
		return 0
	}
	waited := now.Sub(v.pendingSince)
	if projecting && waited < firstStatusDeferral {
		return min(firstStatusDeferral-waited, projectorProgressWindow)
	}
	return max(0, projectionPendingGrace-waited)
}

func (s *snapshot) rpViews() map[string]objectView {
	if s == nil {
		return nil
	}
	return s.rps
}

func (s *snapshot) fsViews() map[string]objectView {
	if s == nil {
		return nil
	}
	return s.fss
}

// currentView returns the view of obj from views, and false when the snapshot (possibly nil)
// was not computed from this version of obj: it predates it, or obj was deleted since.
func (s *snapshot) currentView(views map[string]objectView, obj metav1.Object) (objectView, bool) {
	v, ok := views[obj.GetName()]
	return v, ok && v.version == objectVersion{uid: obj.GetUID(), generation: obj.GetGeneration()}
}
