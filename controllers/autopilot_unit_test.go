package controllers

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/autopilot"
	"github.com/apf-operator/apf-operator/internal/native"
)

const autopilotTestInterval = 5 * time.Minute

var autopilotStart = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// pooledRP is a queued RequestPriority; with bounds (min > 0) it has spec.autopilot.
func pooledRP(name string, level, shares, minShares, maxShares int32) *flowv1.RequestPriority {
	rp := &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.RequestPrioritySpec{
		PriorityLevel: level, AssuredConcurrencyShares: ptr.To(shares), QueuesPerWidth: ptr.To[int32](16),
		HandSize: ptr.To[int32](4), QueueLengthLimit: ptr.To[int32](50)}}
	if minShares > 0 {
		rp.Spec.Autopilot = &flowv1.RequestPriorityAutopilot{MinShares: minShares, MaxShares: maxShares,
			MaxStepPercent: ptr.To[int32](100)}
	}
	return rp
}

// autopilotHarness runs the loop against a fake cluster and a fake kube-apiserver whose
// nominal seats are the shares the projection would apply (the applied-shares rule).
type autopilotHarness struct {
	t        *testing.T
	client   client.Client
	clock    *testingclock.FakeClock
	api      *fakeAPIServer
	recorder *events.FakeRecorder
	registry *prometheus.Registry
	runner   *autopilotRunner
}

func newAutopilotHarness(t *testing.T, rps ...*flowv1.RequestPriority) *autopilotHarness {
	objs := make([]client.Object, len(rps))
	for i := range rps {
		objs[i] = rps[i]
	}
	c := fake.NewClientBuilder().WithScheme(testScheme).WithStatusSubresource(&flowv1.RequestPriority{}).WithObjects(objs...).Build()
	h := newAutopilotHarnessOn(t, c, nil)
	h.api.nominal = func() map[string]float64 {
		out := map[string]float64{}
		for name, shares := range h.nativeShares() {
			out[native.NativeName(name)] = float64(shares)
		}
		return out
	}
	return h
}

// newAutopilotHarnessOn is a harness on cluster c whose kube-apiserver gives each native
// level the nominal seats nominal returns.
func newAutopilotHarnessOn(t *testing.T, c client.Client, nominal func() map[string]float64) *autopilotHarness {
	h := &autopilotHarness{t: t, clock: testingclock.NewFakeClock(autopilotStart), recorder: events.NewFakeRecorder(100),
		registry: prometheus.NewRegistry(), client: c}
	h.api = newFakeAPIServer(nominal)
	h.runner = h.newRunner()
	return h
}

// newRunner is a runner as a newly elected leader starts it.
func (h *autopilotHarness) newRunner() *autopilotRunner {
	metrics, err := newAutopilotMetrics(prometheus.NewRegistry())
	if h.runner == nil {
		metrics, err = newAutopilotMetrics(h.registry)
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return &autopilotRunner{client: h.client, reader: h.client, recorder: h.recorder, fetch: h.api.fetch, clock: h.clock,
		interval: autopilotTestInterval, cfg: autopilot.DefaultConfig(), steps: metrics}
}

func (h *autopilotHarness) list() []flowv1.RequestPriority {
	h.t.Helper()
	var list flowv1.RequestPriorityList
	if err := h.client.List(context.Background(), &list); err != nil {
		h.t.Fatal(err)
	}
	return list.Items
}

func (h *autopilotHarness) get(name string) *flowv1.RequestPriority {
	h.t.Helper()
	var rp flowv1.RequestPriority
	if err := h.client.Get(context.Background(), client.ObjectKey{Name: name}, &rp); err != nil {
		h.t.Fatal(err)
	}
	return &rp
}

// nativeShares are the shares of every RequestPriority's native level as the operator's
// projection computes them from the cluster (snapshot and plan), by RequestPriority name.
func (h *autopilotHarness) nativeShares() map[string]int32 {
	rps := h.list()
	// The most generous budget: these tests are about the pool, not the budget.
	snap := buildSnapshot(rps, nil, &native.Existing{MaxSeatLossPercent: ptr.To[int32](90)}, nil, h.clock.Now())
	byNative := map[string]int32{}
	for _, plc := range snap.plan.PriorityLevels {
		byNative[plc.Name] = *plc.Spec.Limited.NominalConcurrencyShares
	}
	out := map[string]int32{}
	for i := range rps {
		if v, ok := byNative[native.NativeName(rps[i].Name)]; ok {
			out[rps[i].Name] = v
		}
	}
	return out
}

// tick lets one interval pass (the fake kube-apiserver records it) and steps the loop; the
// first tick only reads.
func (h *autopilotHarness) tick(first bool) {
	h.t.Helper()
	if !first {
		h.api.advance(autopilotTestInterval)
		h.clock.Step(autopilotTestInterval)
	}
	if err := h.runner.tick(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	h.checkZeroSum()
}

// checkZeroSum: the pool's native shares always sum to its configured shares.
func (h *autopilotHarness) checkZeroSum() {
	h.t.Helper()
	shares := h.nativeShares()
	var applied, configured int32
	for _, rp := range h.list() {
		if inPool(&rp) {
			applied += shares[rp.Name]
			configured += *rp.Spec.AssuredConcurrencyShares
		}
	}
	if applied != configured {
		h.t.Fatalf("the pool's native shares sum to %d, its configured shares to %d: %v", applied, configured, shares)
	}
}

func (h *autopilotHarness) status(name string) flowv1.AutopilotStatus {
	h.t.Helper()
	st := h.get(name).Status.Autopilot
	if st == nil {
		h.t.Fatalf("RequestPriority %s has no status.autopilot", name)
	}
	return *st
}

// expectEvents checks the events recorded since the last call, in order, by substring.
func (h *autopilotHarness) expectEvents(want ...string) {
	h.t.Helper()
	var got []string
	for len(h.recorder.Events) > 0 {
		got = append(got, <-h.recorder.Events)
	}
	if len(got) != len(want) {
		h.t.Fatalf("events %q, want %d matching %q", got, len(want), want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			h.t.Errorf("event %d is %q, want it to contain %q", i, got[i], want[i])
		}
	}
}

func (h *autopilotHarness) expectSteps(applied, rolledBack, held, incomplete float64) {
	h.t.Helper()
	for result, want := range map[string]float64{autopilotApplied: applied, autopilotRolledBack: rolledBack,
		autopilotHeld: held, autopilotIncomplete: incomplete} {
		if got := testutil.ToFloat64(h.runner.steps.steps.WithLabelValues(result)); got != want {
			h.t.Errorf("apf_operator_autopilot_steps_total{result=%q} = %v, want %v", result, got, want)
		}
	}
}

// pressuredPool: "grow" (10 shares) needs 11.9 seats, "give" (30 shares) uses 5.7; "static"
// is not in the pool. The fake kube-apiserver gives each level as many seats as shares.
func pressuredPool(t *testing.T) *autopilotHarness {
	h := newAutopilotHarness(t, pooledRP("grow", 100, 10, 5, 40), pooledRP("give", 200, 30, 5, 40),
		pooledRP("static", 300, 20, 0, 0))
	h.pressure()
	return h
}

// pressure sets the demand of pressuredPool.
func (h *autopilotHarness) pressure() {
	h.api.demand[native.NativeName("grow")] = 11.9
	h.api.demand[native.NativeName("give")] = 5.7
	h.api.demand[native.NativeName("static")] = 30
}

// applyOnce runs the pressured pool to its first step: a first read, two agreeing windows.
func (h *autopilotHarness) applyOnce() (grow, give int32) {
	h.t.Helper()
	h.tick(true)
	if st := h.status("grow"); st.State != flowv1.AutopilotWaiting || *st.AppliedShares != 10 {
		h.t.Fatalf("first tick: %+v, want Waiting with the configured 10 applied", st)
	}
	h.tick(false)
	if st := h.status("grow"); st.State != flowv1.AutopilotConfirming || *st.AppliedShares != 10 {
		h.t.Fatalf("second tick: %+v, want Confirming with 10 applied", st)
	}
	h.expectEvents()
	h.tick(false)
	g, v := h.status("grow"), h.status("give")
	if g.State != flowv1.AutopilotApplied || *g.AppliedShares <= 10 || *v.AppliedShares >= 30 {
		h.t.Fatalf("third tick: grow %+v, give %+v; want Applied, grow above 10, give below 30", g, v)
	}
	return *g.AppliedShares, *v.AppliedShares
}

func TestAutopilotAppliesAfterConfirmations(t *testing.T) {
	h := pressuredPool(t)
	grow, give := h.applyOnce()
	h.expectEvents("Normal AutopilotApplied nominal shares 30 -> "+strconv.Itoa(int(give)),
		"Normal AutopilotApplied nominal shares 10 -> "+strconv.Itoa(int(grow))) // members in name order
	g := h.status("grow")
	if g.ConfiguredShares != 10 || ptr.Deref(g.RecommendedShares, 0) != grow || ptr.Deref(g.LastGoodShares, 0) != 10 ||
		g.LastChangeTime == nil || !g.LastChangeTime.Time.Equal(h.clock.Now()) || g.Pool == "" || g.Message == "" {
		t.Errorf("grow's status after the step: %+v", g)
	}
	// Git keeps the configured shares; the native levels hold the applied ones.
	if s := *h.get("grow").Spec.AssuredConcurrencyShares; s != 10 {
		t.Errorf("spec.assuredConcurrencyShares changed to %d", s)
	}
	if got := h.nativeShares(); got["grow"] != grow || got["give"] != give || got["static"] != 20 {
		t.Errorf("native shares %v, want grow %d, give %d, static 20", got, grow, give)
	}
	// Resized to the target, grow sits inside the dead band: the loop holds.
	h.tick(false)
	h.tick(false)
	if st := h.status("grow"); st.State != flowv1.AutopilotHolding || *st.AppliedShares != grow {
		t.Errorf("after the step: %+v, want Holding at %d", st, grow)
	}
	h.expectEvents()
	h.expectSteps(1, 0, 3, 1)
}

func TestAutopilotGitChangeRevertsThePool(t *testing.T) {
	h := pressuredPool(t)
	grow, give := h.applyOnce()
	h.expectEvents("AutopilotApplied", "AutopilotApplied")
	rp := h.get("give")
	rp.Spec.AssuredConcurrencyShares = ptr.To[int32](31)
	if err := h.client.Update(context.Background(), rp); err != nil {
		t.Fatal(err)
	}
	// At once, before the loop runs: the projection applies Git's shares to the whole pool.
	if got := h.nativeShares(); got["grow"] != 10 || got["give"] != 31 {
		t.Fatalf("native shares after the Git change %v, want grow 10, give 31", got)
	}
	h.tick(false)
	g, v := h.status("grow"), h.status("give")
	if *g.AppliedShares != 10 || *v.AppliedShares != 31 || v.ConfiguredShares != 31 || g.Pool != v.Pool ||
		g.LastChangeTime == nil || !g.LastChangeTime.Time.Equal(h.clock.Now()) ||
		g.Pool != autopilot.Pool(map[string]int32{"grow": 10, "give": 31}) {
		t.Errorf("status after the Git change: grow %+v, give %+v", g, v)
	}
	h.expectEvents("nominal shares "+strconv.Itoa(int(give))+" -> 31 (configured 31): the configured shares apply again",
		"nominal shares "+strconv.Itoa(int(grow))+" -> 10 (configured 10): the configured shares apply again")
}

func TestAutopilotRemovedRestoresGit(t *testing.T) {
	h := pressuredPool(t)
	h.applyOnce()
	h.expectEvents("AutopilotApplied", "AutopilotApplied")
	grow := h.get("grow")
	grow.Spec.Autopilot = nil
	if err := h.client.Update(context.Background(), grow); err != nil {
		t.Fatal(err)
	}
	if got := h.nativeShares(); got["grow"] != 10 || got["give"] != 30 {
		t.Fatalf("native shares once autopilot is removed %v, want the configured grow 10, give 30", got)
	}
	h.tick(false)
	if st := h.get("grow").Status.Autopilot; st != nil {
		t.Errorf("status.autopilot kept after spec.autopilot was removed: %+v", st)
	}
	// A pool of one level can never change.
	if st := h.status("give"); *st.AppliedShares != 30 {
		t.Errorf("give alone in the pool: %+v, want 30 applied", st)
	}
}

func TestAutopilotRollsBackOnSpike(t *testing.T) {
	h := pressuredPool(t)
	h.applyOnce()
	h.expectEvents("AutopilotApplied", "AutopilotApplied")
	h.api.rejections[native.NativeName("give")] = 400
	h.tick(false)
	g, v := h.status("grow"), h.status("give")
	if g.State != flowv1.AutopilotFrozen || *g.AppliedShares != 10 || *v.AppliedShares != 30 || g.FrozenUntil == nil ||
		!g.FrozenUntil.Time.Equal(h.clock.Now().Add(30*time.Minute)) {
		t.Fatalf("after the spike: grow %+v, give %+v; want Frozen for 30 min at the last good 10 and 30", g, v)
	}
	h.expectEvents("Normal AutopilotRolledBack nominal shares", "Warning AutopilotFrozen",
		"Normal AutopilotRolledBack nominal shares", "Warning AutopilotFrozen")
	// Frozen: the pressure is still there, nothing changes.
	h.api.rejections[native.NativeName("give")] = 0
	h.tick(false)
	h.tick(false)
	if st := h.status("grow"); st.State != flowv1.AutopilotFrozen || *st.AppliedShares != 10 {
		t.Errorf("during the freeze: %+v", st)
	}
	h.expectEvents()
	h.expectSteps(1, 1, 3, 1)
}

func TestAutopilotNewLeaderResumes(t *testing.T) {
	h := pressuredPool(t)
	grow, give := h.applyOnce()
	h.expectEvents("AutopilotApplied", "AutopilotApplied")
	h.runner = h.newRunner() // a leader change: a new runner, nothing in memory
	h.tick(false)
	g := h.status("grow")
	if g.State != flowv1.AutopilotWaiting || *g.AppliedShares != grow || *h.status("give").AppliedShares != give ||
		ptr.Deref(g.LastGoodShares, 0) != 10 {
		t.Errorf("new leader's first tick: %+v; want Waiting, %d still applied, last good 10", g, grow)
	}
	h.expectEvents()
}

func TestAutopilotMetricsUnreadable(t *testing.T) {
	h := pressuredPool(t)
	h.tick(true)
	h.api.fail = context.DeadlineExceeded
	h.tick(false)
	if st := h.status("grow"); st.State != flowv1.AutopilotWaiting || !strings.Contains(st.Message, "cannot read") {
		t.Errorf("with /metrics unreadable: %+v", st)
	}
}

// TestAutopilotRunnerStart: the runnable runs only on the leader, steps at once (a first read)
// and then once per interval of its clock, and stops with its context.
func TestAutopilotRunnerStart(t *testing.T) {
	h := pressuredPool(t)
	if !h.runner.NeedLeaderElection() {
		t.Fatal("the autopilot must run on the leader only")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.runner.Start(ctx) }()
	waitState := func(want string) {
		t.Helper()
		eventually(t, func() error {
			var rp flowv1.RequestPriority
			if err := h.client.Get(ctx, client.ObjectKey{Name: "grow"}, &rp); err != nil {
				return err
			}
			if rp.Status.Autopilot == nil || rp.Status.Autopilot.State != want {
				return fmt.Errorf("status.autopilot %+v, want state %s", rp.Status.Autopilot, want)
			}
			return nil
		})
	}
	waitState(flowv1.AutopilotWaiting)
	eventually(t, func() error {
		if !h.clock.HasWaiters() {
			return fmt.Errorf("no ticker yet")
		}
		return nil
	})
	h.api.advance(autopilotTestInterval)
	h.clock.Step(autopilotTestInterval)
	waitState(flowv1.AutopilotConfirming)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start returned %v", err)
	}
}
