package failover

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/autopilot"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/test/harness"
)

// autopilotInterval is the replicas' --autopilot-interval: the shortest allowed, so that the
// new leader runs three steps within 40 seconds.
const autopilotInterval = 15 * time.Second

// The pool: Git configures 10 and 30 shares, a previous leader left 17 and 23 applied.
var (
	poolConfigured = map[string]int32{"ap-grow": 10, "ap-give": 30}
	poolApplied    = map[string]int32{"ap-grow": 17, "ap-give": 23}
)

// seededMessage is the message of the record the test writes as a previous leader would.
const seededMessage = "seeded by the test as a previous leader would leave it"

// requireAutopilotHeld waits until the new leader has stepped its loop three times, stops the
// sampler that ran from before the kill at killed, and checks what TestLeaderFailover's
// AutopilotAcrossLeaderChange states: no native level changed, the pool's applied shares held,
// the new leader's first window waited, and no step was applied.
func requireAutopilotHeld(t *testing.T, newLeader *replica, s *sampler, killed time.Time) {
	t.Helper()
	steps := waitSteps(t, newLeader, 3)
	s.stop()
	t.Logf("new leader's steps %v; %d samples every 100 ms over %s; pool states after the kill: %v",
		steps, s.samples, time.Since(killed).Round(time.Second), s.statesAfter(killed))
	for _, v := range s.violations {
		t.Error(v)
	}
	if s.samples < 50 {
		t.Errorf("only %d samples; the sampler could not keep up", s.samples)
	}
	requireFirstWindowWaits(t, s.statesAfter(killed), steps)
	requireNoAppliedEvent(t)
}

// pooledLevel is a valid RequestPriority in the pool, with bounds 5..40.
func pooledLevel(name string, level, shares int32) *flowv1.RequestPriority {
	rp := queuedLevel(name, level)
	rp.Spec.AssuredConcurrencyShares = ptr.To(shares)
	rp.Spec.Autopilot = &flowv1.RequestPriorityAutopilot{MinShares: 5, MaxShares: 40}
	return rp
}

// seedPool creates the pool and writes, as the admin through the status subresource, the
// record a previous leader would have left, before any replica runs: no leader's write can
// race with it. No webhook serves yet, so admission is set to Ignore meanwhile (the objects
// are valid; the CRD's CEL rules still apply).
func seedPool(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	setFailurePolicy(t, admissionregistrationv1.Ignore)
	pool := autopilot.Pool(poolConfigured)
	for i, name := range []string{"ap-give", "ap-grow"} {
		rp := pooledLevel(name, int32(4100+100*i), poolConfigured[name])
		if err := k8s.Create(ctx, rp); err != nil {
			t.Fatal(err)
		}
		orig := rp.DeepCopy()
		rp.Status.Autopilot = &flowv1.AutopilotStatus{State: flowv1.AutopilotHolding, ConfiguredShares: poolConfigured[name],
			AppliedShares: ptr.To(poolApplied[name]), LastGoodShares: ptr.To(poolConfigured[name]), Pool: pool,
			Message: seededMessage, LastChangeTime: ptr.To(metav1.NewTime(time.Now().Add(-time.Hour)))}
		if err := k8s.Status().Patch(ctx, rp, client.MergeFrom(orig)); err != nil {
			t.Fatalf("seeding the autopilot status of %s: %v", name, err)
		}
	}
	setFailurePolicy(t, admissionregistrationv1.Fail)
}

func listNativeShares(ctx context.Context) (map[string]int32, error) {
	var plcs flowcontrolv1.PriorityLevelConfigurationList
	if err := k8s.List(ctx, &plcs); err != nil {
		return nil, err
	}
	out := make(map[string]int32, len(plcs.Items))
	for _, plc := range plcs.Items {
		if plc.Spec.Limited != nil {
			out[plc.Name] = ptr.Deref(plc.Spec.Limited.NominalConcurrencyShares, -1)
		}
	}
	return out, nil
}

// waitPoolNative waits until the pool's native levels hold want, by RequestPriority name.
func waitPoolNative(t *testing.T, want map[string]int32) {
	t.Helper()
	harness.Eventually(t, 90*time.Second, fmt.Sprintf("the pool's native levels to hold %v", want), func(ctx context.Context) (bool, error) {
		live, err := listNativeShares(ctx)
		if err != nil {
			return false, err
		}
		for rp, shares := range want {
			if got, ok := live[native.NativeName(rp)]; !ok || got != shares {
				return false, fmt.Errorf("the native level of %s holds %d shares (present %t), want %d", rp, got, ok, shares)
			}
		}
		return true, nil
	})
}

// autopilotSteps are a replica's apf_operator_autopilot_steps_total by result.
type autopilotSteps map[string]float64

func (s autopilotSteps) total() float64 {
	n := 0.0
	for _, v := range s {
		n += v
	}
	return n
}

// waitSteps waits until the replica's loop has stepped at least n times and returns its counts.
func waitSteps(t *testing.T, r *replica, n float64) autopilotSteps {
	t.Helper()
	var steps autopilotSteps
	harness.Eventually(t, 3*autopilotInterval+30*time.Second, fmt.Sprintf("replica %s to step its autopilot %v times", r.name, n),
		func(context.Context) (bool, error) {
			r.requireRunning(t)
			m := r.metrics(t)
			steps = autopilotSteps{}
			for _, result := range []string{"applied", "rolled_back", "held", "incomplete"} {
				steps[result] = sum(m, "apf_operator_autopilot_steps_total", map[string]string{"result": result})
			}
			return steps.total() >= n, nil
		})
	return steps
}

// poolState is what one sample saw of a pool member's status.autopilot.
type poolState struct {
	at      time.Time
	name    string
	state   string
	message string
}

// sampler reads, every 100 ms, every native level's nominal shares and the pool members'
// status.autopilot, and records every departure from what must hold.
type sampler struct {
	baseline   map[string]int32
	cancel     context.CancelFunc
	done       chan struct{}
	mu         sync.Mutex
	samples    int
	violations []string
	states     []poolState
}

func startSampler(t *testing.T, baseline map[string]int32) *sampler {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &sampler{baseline: baseline, cancel: cancel, done: make(chan struct{})}
	go s.run(ctx)
	t.Cleanup(s.stop)
	return s
}

func (s *sampler) stop() {
	s.cancel()
	<-s.done
}

// waitSamples waits until the sampler has taken n samples.
func (s *sampler) waitSamples(t *testing.T, n int) {
	t.Helper()
	harness.Eventually(t, 30*time.Second, fmt.Sprintf("%d samples", n), func(context.Context) (bool, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.samples >= n, nil
	})
}

func (s *sampler) run(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		s.sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sample takes one sample; a read that fails (the sampler being stopped) is not one.
func (s *sampler) sample(ctx context.Context) {
	live, err := listNativeShares(ctx)
	if err != nil {
		return
	}
	var rps []flowv1.RequestPriority
	for _, name := range []string{"ap-grow", "ap-give"} {
		var rp flowv1.RequestPriority
		if err := k8s.Get(ctx, client.ObjectKey{Name: name}, &rp); err != nil {
			return
		}
		rps = append(rps, rp)
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	for name, want := range s.baseline {
		if got, ok := live[name]; !ok || got != want {
			s.violate("%s: native level %s holds %d shares (present %t), %d before the kill", now.Format(time.StampMilli), name, got, ok, want)
		}
	}
	for _, rp := range rps {
		st := rp.Status.Autopilot
		switch {
		case st == nil || st.AppliedShares == nil:
			s.violate("%s: %s has no status.autopilot.appliedShares", now.Format(time.StampMilli), rp.Name)
		case *st.AppliedShares != poolApplied[rp.Name]:
			s.violate("%s: status.autopilot.appliedShares of %s is %d, want %d", now.Format(time.StampMilli), rp.Name, *st.AppliedShares, poolApplied[rp.Name])
		}
		if st != nil {
			s.states = append(s.states, poolState{at: now, name: rp.Name, state: st.State, message: st.Message})
		}
	}
}

// violate records a violation, at most 20 of them.
func (s *sampler) violate(format string, args ...any) {
	if len(s.violations) < 20 {
		s.violations = append(s.violations, fmt.Sprintf(format, args...))
	}
}

// statesAfter are the distinct states, in order, the pool's status went through after t.
func (s *sampler) statesAfter(t time.Time) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, p := range s.states {
		if p.at.Before(t) {
			continue
		}
		key := p.state + " (" + p.message + ")"
		if !seen[key] {
			seen[key] = true
			out = append(out, key)
		}
	}
	return out
}

// requireFirstWindowWaits checks the new leader's steps: none applied or rolled back, at least
// one incomplete (its first window, which has no earlier read); and the pool's status after
// the kill was never Applied, and did show a Waiting on incomplete metrics.
func requireFirstWindowWaits(t *testing.T, states []string, steps autopilotSteps) {
	t.Helper()
	if steps["applied"] != 0 || steps["rolled_back"] != 0 {
		t.Errorf("the new leader's steps %v: want none applied or rolled back", steps)
	}
	if steps["incomplete"] < 1 {
		t.Errorf("the new leader's steps %v: want its first window incomplete", steps)
	}
	waited := false
	for _, st := range states {
		if strings.HasPrefix(st, flowv1.AutopilotApplied) {
			t.Errorf("the pool's status was %s after the kill", st)
		}
		if strings.HasPrefix(st, flowv1.AutopilotWaiting) {
			waited = true
		}
	}
	if !waited {
		t.Errorf("the pool's status after the kill never showed the new leader's first window Waiting: %v", states)
	}
}

// requireNoAppliedEvent checks that no AutopilotApplied Event names a pool member: the seeded
// applied shares were never changed, by either leader.
func requireNoAppliedEvent(t *testing.T) {
	t.Helper()
	var evs corev1.EventList
	if err := k8s.List(context.Background(), &evs); err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		if _, pooled := poolConfigured[ev.InvolvedObject.Name]; pooled && ev.Reason == "AutopilotApplied" {
			t.Errorf("Event %s on %s: %s", ev.Reason, ev.InvolvedObject.Name, ev.Message)
		}
	}
}
