package failover

import (
	"context"
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/test/harness"
)

// TestLeaderFailover runs two replicas with leader election, as the chart does: exactly one
// reconciles while both serve admission; SIGKILL of the leader hands the Lease to the other
// within the lease duration (plus the polling slack client-go allows); admission keeps working
// through the failover; the new leader repairs the defaults without rewriting or duplicating
// anything.
//
// The same pair and the same kill carry the autopilot's leader change (subtest
// AutopilotAcrossLeaderChange, run before the repair, which deletes a level): a pool of two
// RequestPriorities has applied shares (17 and 23) that differ from Git's (10 and 30), and from
// before the kill until the new leader has stepped its loop three times (its first window,
// then the two that a change would need to agree) the native levels of the pool hold the
// applied shares (never Git's, never anything else), their recorded applied shares never
// change, no native level's nominal shares change at all, the new leader's first window waits
// for complete metrics, and no step is applied (no AutopilotApplied Event). One pair and one
// takeover serve both, instead of starting and killing a second pair.
func TestLeaderFailover(t *testing.T) {
	resetCluster(t)
	seedPool(t)
	args := append(shortLease.args(), "--autopilot-interval="+autopilotInterval.String())
	a := startReplica(t, "a", args...)
	b := startReplica(t, "b", args...)
	front.setBackends(a.webhookAddr, b.webhookAddr)
	a.waitServing(t)
	b.waitServing(t)
	waitReady(t, append(defaultKeys(), "rp/ap-grow", "rp/ap-give"))
	waitPoolNative(t, poolApplied)

	leader, follower := whoLeads(t, a, b)
	requireOneReconciles(t, leader, follower)
	admittedBefore := requireBothServeAdmission(t, a, b)
	before := identities(t)

	// The sampler's baseline is every native level once the leader has projected what the
	// checks above created and removed the barrier's level.
	s := startSampler(t, settledNativeShares(t, admittedBefore))
	s.waitSamples(t, 10) // samples before the kill
	holder, renewed, err := leaseHolder(context.Background())
	if err != nil || holder == "" {
		t.Fatalf("no Lease holder while %s leads (err %v)", leader.name, err)
	}
	killed := time.Now()
	leader.kill(t)
	admitted := probeAdmissionUntilTakeover(t, follower, holder)
	takeover := time.Since(killed)
	t.Logf("takeover: %s after SIGKILL, %s after the killed leader's last renewal (lease %s, retry %s)",
		takeover.Round(time.Millisecond), time.Since(renewed).Round(time.Millisecond), shortLease.duration, shortLease.retry)
	// client-go's follower notices a renewal only when it polls (every retry period, jittered by
	// up to 1.2x) and tries again only when it polls: lease + 2.4 retry periods (8.4 s) on an
	// idle machine, logged above. The check allows five times that, so that a loaded machine
	// passes and a follower that never takes over by itself (waiting on a restart) does not.
	if limit := 5 * (shortLease.duration + shortLease.retry*12/5); takeover > limit {
		t.Errorf("the follower took over %s after the kill; want at most %s", takeover, limit)
	}
	follower.requireRunning(t)
	if m := follower.metrics(t); !isLeader(m) {
		t.Fatalf("replica %s holds the Lease but its metrics do not say it leads", follower.name)
	}

	t.Run("AutopilotAcrossLeaderChange", func(t *testing.T) {
		requireAutopilotHeld(t, follower, s, killed)
	})
	repairAfterTakeover(t, follower, before, admitted)
}

// settledNativeShares waits until each of the named RequestPriorities has its native level and
// the barrier's level is gone, and returns the nominal shares of every Limited native level.
func settledNativeShares(t *testing.T, names []string) map[string]int32 {
	t.Helper()
	var shares map[string]int32
	harness.Eventually(t, 60*time.Second, fmt.Sprintf("native levels for %v, none for the barrier", names), func(ctx context.Context) error {
		var err error
		if shares, err = listNativeShares(ctx); err != nil {
			return err
		}
		if _, ok := shares[native.NativeName(barrierName)]; ok {
			return fmt.Errorf("the barrier's native level is still there")
		}
		for _, name := range names {
			if _, ok := shares[native.NativeName(name)]; !ok {
				return fmt.Errorf("%s has no native level yet", name)
			}
		}
		return nil
	})
	return shares
}

// whoLeads waits until exactly one replica reports that it leads and returns it first.
func whoLeads(t *testing.T, a, b *replica) (leader, follower *replica) {
	t.Helper()
	harness.Eventually(t, 60*time.Second, "one leader", func(context.Context) (bool, error) {
		la, lb := isLeader(a.metrics(t)), isLeader(b.metrics(t))
		switch {
		case la && lb:
			t.Fatal("both replicas report that they lead")
		case la:
			leader, follower = a, b
		case lb:
			leader, follower = b, a
		}
		return leader != nil, nil
	})
	return leader, follower
}

// barrierName is the RequestPriority requireOneReconciles creates and deletes.
const barrierName = "barrier-one-leader"

// requireOneReconciles checks that the leader reconciles and the follower does not. A fixed
// wait would pass vacuously on a slow machine, so it waits for a barrier instead: a new
// RequestPriority whose status only a running status reconciler writes. Once the leader has
// written it, a follower that ran reconcilers would have counted that change too.
func requireOneReconciles(t *testing.T, leader, follower *replica) {
	t.Helper()
	ctx := context.Background()
	barrier := queuedLevel(barrierName, 6900)
	if err := k8s.Create(ctx, barrier); err != nil {
		t.Fatalf("creating the barrier RequestPriority: %v", err)
	}
	harness.Eventually(t, 60*time.Second, "the leader to write the barrier's status", func(ctx context.Context) (bool, error) {
		var rp flowv1.RequestPriority
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(barrier), &rp); err != nil {
			return false, err
		}
		return len(rp.Status.Conditions) > 0, nil
	})
	lm, fm := leader.metrics(t), follower.metrics(t)
	if n := reconciles(lm); n == 0 {
		t.Errorf("the leader %s ran no reconciles", leader.name)
	}
	if n := reconciles(fm); n != 0 || isLeader(fm) {
		t.Errorf("the follower %s ran %v reconciles (leads: %t); want none", follower.name, n, isLeader(fm))
	}
	t.Logf("reconciles: leader %s %v, follower %s %v", leader.name, reconciles(lm), follower.name, reconciles(fm))
	if err := k8s.Delete(ctx, barrier); err != nil {
		t.Fatalf("deleting the barrier RequestPriority: %v", err)
	}
}

// requireBothServeAdmission sends admission requests through the balancer, dropping its
// connections between them so that kube-apiserver dials each replica in turn, and requires
// both replicas' webhook servers to have answered. It returns the names of the good objects
// admitted.
func requireBothServeAdmission(t *testing.T, a, b *replica) []string {
	t.Helper()
	var admitted []string
	for i := range 4 {
		front.dropConnections()
		// kube-apiserver may still pick a kept-alive connection the balancer just closed; the call
		// then fails without reaching a webhook, and is retried.
		harness.Eventually(t, 30*time.Second, "an admission call answered by a webhook", func(ctx context.Context) (bool, error) {
			unreachable, err := admission(ctx, queuedLevel(fmt.Sprintf("both-%d", i), int32(6000+i)),
				tooBigAHand(fmt.Sprintf("both-bad-%d", i), int32(6100+i)))
			if err != nil {
				t.Fatalf("admission with both replicas up: %v", err)
			}
			return !unreachable, nil
		})
		admitted = append(admitted, fmt.Sprintf("both-%d", i))
	}
	for _, r := range []*replica{a, b} {
		if n := webhookCalls(r.metrics(t)); n == 0 {
			t.Errorf("replica %s answered no admission request (balancer connections: %v)", r.name, front.connections())
		}
	}
	return admitted
}

// probeAdmissionUntilTakeover sends a bad and a good object through admission every 200 ms
// from the kill until the follower holds the Lease, and a last pair after it; it returns the
// names of the good objects admitted. A call that could not reach any webhook is retried
// (kube-apiserver may have sent it over a connection to the dead replica) and counted.
func probeAdmissionUntilTakeover(t *testing.T, follower *replica, oldHolder string) []string {
	t.Helper()
	ctx := context.Background()
	var admitted []string
	unreachable := 0
	tookOver := false
	start := time.Now()
	for i := 0; ; i++ {
		name := fmt.Sprintf("during-failover-%d", i)
		missed, err := admission(ctx, queuedLevel(name, int32(7000+i)), tooBigAHand(name+"-bad", int32(7500+i)))
		if err != nil {
			t.Fatalf("admission during the failover: %v", err)
		}
		if missed {
			if unreachable++; unreachable > 5 {
				t.Fatal("admission could not reach a webhook 5 times while one replica was up")
			}
			continue
		}
		admitted = append(admitted, name)
		if tookOver {
			break
		}
		holder, _, err := leaseHolder(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tookOver = holder != "" && holder != oldHolder
		if time.Since(start) > time.Minute {
			t.Fatal("the follower did not take over within a minute")
		}
		if !tookOver {
			follower.requireRunning(t)
			time.Sleep(200 * time.Millisecond)
		}
	}
	t.Logf("admission during the failover: %d good objects admitted, %d bad denied, %d calls retried because no webhook answered",
		len(admitted), len(admitted), unreachable)
	return admitted
}

// repairAfterTakeover deletes the level-0 default and requires the new leader to re-create it,
// to make every admitted object Ready, and to have written nothing else: the other defaults
// keep their UID and generation, and its metrics show one creation and no conflicts.
func repairAfterTakeover(t *testing.T, leader *replica, before map[string]identity, admitted []string) {
	t.Helper()
	ctx := context.Background()
	top := &flowv1.RequestPriority{}
	if err := k8s.Get(ctx, client.ObjectKey{Name: "system-top"}, top); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, top); err != nil {
		t.Fatal(err)
	}
	keys := defaultKeys()
	for _, name := range admitted {
		keys = append(keys, "rp/"+name)
	}
	waitReady(t, keys)
	after := identities(t)
	if after["rp/system-top"].uid == top.UID {
		t.Fatal("system-top was not re-created")
	}
	for k, id := range before {
		if k != "rp/system-top" && after[k] != id {
			t.Errorf("%s changed across the failover: %+v, then %+v", k, id, after[k])
		}
	}
	if want := len(before) + len(admitted); len(after) != want {
		t.Errorf("%d objects after the failover, want %d (%d before, %d admitted during it)", len(after), want, len(before), len(admitted))
	}
	m := leader.metrics(t)
	wantCount(t, m, "apf_operator_defaults_created_total", "RequestPriority", 1)
	wantCount(t, m, "apf_operator_defaults_created_total", "FlowSchema", 0)
	wantCount(t, m, "apf_operator_defaults_conflicts_total", "RequestPriority", 0)
	wantCount(t, m, "apf_operator_defaults_conflicts_total", "FlowSchema", 0)
}

// wantCount requires a defaults counter of the given kind to have the given value.
func wantCount(t *testing.T, m map[string]*dto.MetricFamily, name, kind string, want float64) {
	t.Helper()
	if got := sum(m, name, map[string]string{"kind": kind}); got != want {
		t.Errorf("%s{kind=%q} = %v, want %v", name, kind, got, want)
	}
}
