package autopilot_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

const (
	// autopilotInterval is the operator's --autopilot-interval: a second above the loop's
	// shortest complete window (autopilot.DefaultConfig().MinWindow, 15 s), so that a tick a
	// little late does not make the next window too short to count.
	autopilotInterval = 16 * time.Second
	// sampleEvery is how often the nominal seats and native shares are sampled.
	sampleEvery = 2 * time.Second
	// minFewerRejections is the least fraction by which the autopilot run must reject fewer
	// requests of the pool than the static run.
	minFewerRejections = 0.30
	// maxWaitRatio bounds a level's p99 wait in the autopilot run against the static run;
	// waitResolution is the histogram's first bucket above 0 (kube-apiserver's
	// request_wait_duration_seconds buckets 0, 0.005, 0.02, ...): two p99s at or below it
	// cannot be told apart and count as equal.
	maxWaitRatio   = 1.10
	waitResolution = 0.005
)

// run is one play of the schedule: kube-apiserver's figures by level, the clients' by tenant.
type run struct {
	name       string
	start, end time.Time
	levels     map[string]levelRun
	clients    map[string]*sent
}

// TestEvalAutopilotAgainstStatic plays the schedule with static configuration, then with the
// autopilot on, and compares the runs' rejections and queue waits (docs/autopilot-live.md). An
// evaluation: `make eval` runs it alone; `make test` leaves the package out (Makefile,
// EVAL_PACKAGES), since two runs minutes apart compare only on an otherwise idle machine.
func TestEvalAutopilotAgainstStatic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	k8s, cs := clients(t)
	applyTenants(ctx, t)
	static, auto, taken, errs := playThenAutopilot(ctx, t, k8s, cs, "static", "autopilot")
	checkClassification(ctx, t, cs, static, auto)
	checkRejections(t, static, auto)
	checkWaits(t, static, auto)
	checkSamples(t, taken, errs)
	checkStatus(ctx, t, k8s)
	checkEvents(ctx, t, cs)
}

// playThenAutopilot plays the schedule on the tenants as configured (the run named baseline),
// turns the autopilot on, waits until it holds, and plays the schedule again (the run named
// withAutopilot). It samples the levels' seats throughout, logs both runs' figures, and returns
// the runs and the samples.
func playThenAutopilot(ctx context.Context, t *testing.T, k8s client.Client, cs kubernetes.Interface,
	baseline, withAutopilot string) (before, auto run, taken []sample, errs []error) {
	t.Helper()
	load := newLoader(t)
	samples := startSampler(ctx, cs, k8s, sampleEvery)

	before = play(ctx, t, cs, load, baseline)
	enableAutopilot(ctx, t, k8s)
	waitHolding(ctx, t, k8s)
	auto = play(ctx, t, cs, load, withAutopilot)

	taken, errs = samples.Stop()
	logFigures(t, before, auto, taken)
	return before, auto, taken, errs
}

// play runs the schedule once and measures it.
func play(ctx context.Context, t *testing.T, cs kubernetes.Interface, load *loader, name string) run {
	t.Helper()
	before, err := read(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	clients := load.run(ctx, schedule)
	after, err := read(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s run: %v", name, ctx.Err())
	}
	return run{name: name, start: before.at, end: after.at, levels: runOf(before, after), clients: clients}
}

// waitHolding waits until the loop has seen a complete window of the pool (its state is no
// longer Waiting on every tenant): the run that follows then starts with a loop that can
// act, as one that has been on for a while would.
func waitHolding(ctx context.Context, t *testing.T, k8s client.Client) {
	t.Helper()
	deadline := time.Now().Add(6 * autopilotInterval)
	for {
		states := map[string]string{}
		for _, tn := range tenants {
			var rp flowv1.RequestPriority
			if err := k8s.Get(ctx, client.ObjectKey{Name: tn.name}, &rp); err != nil {
				t.Fatal(err)
			}
			if rp.Status.Autopilot != nil {
				states[tn.name] = rp.Status.Autopilot.State
			}
		}
		if len(states) == len(tenants) && allIn(states, flowv1.AutopilotHolding) {
			t.Logf("autopilot on: %v", states)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the autopilot did not hold the idle pool within %s: states %v", 6*autopilotInterval, states)
		}
		time.Sleep(time.Second)
	}
}

func allIn(states map[string]string, want string) bool {
	for _, s := range states {
		if s != want {
			return false
		}
	}
	return true
}

// poolRejected sums the pool levels' rejections of a run.
func poolRejected(r run) float64 {
	var sum float64
	for _, tn := range tenants {
		sum += r.levels[nativeLevel(tn.name)].Rejected
	}
	return sum
}

func checkRejections(t *testing.T, static, auto run) {
	t.Helper()
	s, a := poolRejected(static), poolRejected(auto)
	if s < 100 {
		t.Fatalf("the static run rejected %v requests of the pool: too few for the workload to mean anything", s)
	}
	if a > (1-minFewerRejections)*s {
		t.Errorf("the autopilot run rejected %v requests of the pool, the static run %v: want at least %.0f%% fewer",
			a, s, 100*minFewerRejections)
	}
}

// checkWaits compares every level's p99 wait of executed requests between the runs.
func checkWaits(t *testing.T, static, auto run) {
	t.Helper()
	for level, s := range static.levels {
		a, ok := auto.levels[level]
		if !ok || s.Served == 0 || a.Served == 0 {
			continue
		}
		if a.WaitP99 <= waitResolution && s.WaitP99 <= waitResolution {
			continue
		}
		if a.WaitP99 > maxWaitRatio*s.WaitP99 {
			t.Errorf("level %s: p99 wait %.3fs with the autopilot, %.3fs static: more than %.0f%% worse",
				level, a.WaitP99, s.WaitP99, 100*(maxWaitRatio-1))
		}
	}
}

// checkClassification: every tenant's responses named its own projected level only.
func checkClassification(ctx context.Context, t *testing.T, cs kubernetes.Interface, runs ...run) {
	t.Helper()
	for _, tn := range tenants {
		plc, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, nativeLevel(tn.name), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			c := r.clients[tn.name]
			if len(c.LevelUIDs) != 1 || !c.LevelUIDs[string(plc.UID)] {
				t.Errorf("%s run: %s's responses named levels %v, want only %s (%s)", r.name, tn.user, c.LevelUIDs, plc.Name, plc.UID)
			}
			if c.Other > 0 {
				t.Errorf("%s run: %s got %d responses neither created nor 429, last %s", r.name, tn.user, c.Other, c.OtherStatus)
			}
		}
	}
}

// checkSamples: every level outside the pool kept its nominal seats at every sample, and the
// pool's native shares always summed to the configured sum.
func checkSamples(t *testing.T, samples []sample, errs []error) {
	t.Helper()
	if len(errs) > 0 {
		t.Errorf("%d samples failed, first: %v", len(errs), errs[0])
	}
	if len(samples) < 10 {
		t.Fatalf("only %d samples", len(samples))
	}
	first := samples[0]
	outside := outsidePool(first.nominal)
	for _, s := range samples {
		for _, level := range outside {
			if s.nominal[level] != first.nominal[level] {
				t.Errorf("%s: level %s has %v nominal seats, %v at %s", s.at.Format(time.TimeOnly), level,
					s.nominal[level], first.nominal[level], first.at.Format(time.TimeOnly))
			}
		}
		if got := outsidePool(s.nominal); strings.Join(got, ",") != strings.Join(outside, ",") {
			t.Errorf("%s: the levels outside the pool are %v, were %v", s.at.Format(time.TimeOnly), got, outside)
		}
		var sum int32
		for _, tn := range tenants {
			sum += s.shares[tn.name]
		}
		if len(s.shares) != len(tenants) || sum != configuredSum() {
			t.Errorf("%s: the pool's native shares %v sum to %d, want %d", s.at.Format(time.TimeOnly), s.shares, sum, configuredSum())
		}
	}
}

// checkStatus: status.autopilot shows configured, applied and recommended shares, and the
// spec still holds the configured (Git) shares.
func checkStatus(ctx context.Context, t *testing.T, k8s client.Client) {
	t.Helper()
	for _, tn := range tenants {
		var rp flowv1.RequestPriority
		if err := k8s.Get(ctx, client.ObjectKey{Name: tn.name}, &rp); err != nil {
			t.Fatal(err)
		}
		if got := *rp.Spec.AssuredConcurrencyShares; got != tn.shares {
			t.Errorf("%s: spec.assuredConcurrencyShares is %d, want the configured %d (the operator never writes spec)", tn.name, got, tn.shares)
		}
		a := rp.Status.Autopilot
		if a == nil || a.ConfiguredShares != tn.shares || a.AppliedShares == nil || a.RecommendedShares == nil || a.State == "" {
			t.Errorf("%s: status.autopilot %s, want configured %d, applied, recommended and a state", tn.name, describeStatus(a), tn.shares)
			continue
		}
		t.Logf("%s: status.autopilot %s", tn.name, describeStatus(a))
	}
}

func describeStatus(a *flowv1.AutopilotStatus) string {
	if a == nil {
		return "absent"
	}
	return fmt.Sprintf("{state %s, configured %d, applied %s, recommended %s, lastGood %s, message %q}", a.State,
		a.ConfiguredShares, ptrString(a.AppliedShares), ptrString(a.RecommendedShares), ptrString(a.LastGoodShares), a.Message)
}

func ptrString(p *int32) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// appliedReason is the reason of the Event the operator records for each change of shares.
const appliedReason = "AutopilotApplied"

// checkEvents: at least one AutopilotApplied Event on a tenant's RequestPriority.
func checkEvents(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, err := cs.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		applied := appliedEvents(list.Items)
		if len(applied) > 0 {
			for _, e := range applied {
				t.Logf("Event %s on RequestPriority %s: %s", e.Reason, e.InvolvedObject.Name, e.Message)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s Event on a RequestPriority among %d Events", appliedReason, len(list.Items))
		}
		time.Sleep(2 * time.Second)
	}
}

func appliedEvents(events []corev1.Event) []corev1.Event {
	var out []corev1.Event
	for _, e := range events {
		if e.Reason == appliedReason && e.InvolvedObject.Kind == "RequestPriority" {
			out = append(out, e)
		}
	}
	return out
}

// clients are the admin's controller-runtime client and clientset on the suite's cluster.
func clients(t *testing.T) (client.Client, *kubernetes.Clientset) {
	t.Helper()
	k8s, err := suite.Cluster.Client()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(suite.Cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return k8s, cs
}
