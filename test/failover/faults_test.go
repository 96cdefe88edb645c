package failover

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/test/harness"
)

// TestKilledWhileCreatingDefaults kills the only replica right after its first default object
// appears (admission slowed to 300 ms a call, so that the ten creations take seconds) and
// requires the next replica to complete the defaults without re-creating or duplicating any.
// The replicas run with enforcement none, whose defaults are the proposal's ten.
func TestKilledWhileCreatingDefaults(t *testing.T) {
	resetCluster(t)
	keys := keysOf(defaults.Proposal())
	none := append(shortLease.args(), "--enforcement=none")
	first := startReplica(t, "first", none...)
	front.setBackends(first.webhookAddr)
	front.setDelay(300 * time.Millisecond)
	harness.Eventually(t, 90*time.Second, "the first default object", func(ctx context.Context) (bool, error) {
		first.requireRunning(t)
		n, err := countObjects(ctx)
		return n > 0, err
	})
	first.kill(t)
	partial := identities(t)
	if len(partial) == 0 || len(partial) >= len(keys) {
		t.Fatalf("the kill left %d objects; the test needs it to land while the defaults are being created", len(partial))
	}
	t.Logf("the kill left %d of the %d default objects", len(partial), len(keys))

	// The restart is what this test is about, not the takeover (TestLeaderFailover's): the
	// Lease the killed replica left is released, so that the second replica need not wait out
	// its duration.
	deleteLease(t)
	front.setDelay(0)
	second := startReplica(t, "second", none...)
	front.setBackends(second.webhookAddr)
	waitReady(t, keys)
	all := identities(t)
	if len(all) != len(keys) {
		t.Errorf("%d objects after the restart, want the %d defaults", len(all), len(keys))
	}
	for k, id := range partial {
		if all[k] != id {
			t.Errorf("%s was re-created or rewritten after the restart: %+v, then %+v", k, id, all[k])
		}
	}
	m := second.metrics(t)
	created := sum(m, "apf_operator_defaults_created_total", nil)
	if want := float64(len(keys) - len(partial)); created != want {
		t.Errorf("the second replica created %v defaults, want %v", created, want)
	}
	wantCount(t, m, "apf_operator_defaults_conflicts_total", "RequestPriority", 0)
	wantCount(t, m, "apf_operator_defaults_conflicts_total", "FlowSchema", 0)
}

// TestAPIServerRestart kills kube-apiserver (SIGKILL; etcd keeps running) under a running
// replica, starts it again on the same port and certificates, and requires the operator to carry on:
// changes made afterwards are reconciled, reported in status and projected natively.
func TestAPIServerRestart(t *testing.T) {
	resetCluster(t)
	// A lease long enough to outlast the outage, so the replica keeps leading; with the chart's
	// 10 s renew deadline a longer outage makes it exit, and the kubelet would restart it.
	outlast := leaseTimes{duration: 60 * time.Second, renew: 45 * time.Second, retry: 2 * time.Second}
	r := startReplica(t, "replica", outlast.args()...)
	front.setBackends(r.webhookAddr)
	waitReady(t, defaultKeys())
	top := &flowv1.RequestPriority{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: "system-top"}, top); err != nil {
		t.Fatal(err)
	}

	down := time.Now()
	if err := cluster.KillAPIServer(); err != nil {
		t.Fatalf("killing kube-apiserver: %v", err)
	}
	// No pause: SIGKILL closed every connection at once, so the replica's watches and Lease
	// renewals fail from here on, and kube-apiserver's own start-up keeps it down for seconds
	// (logged below). A longer outage would only push the replica's reflectors further along
	// their back-off.
	if err := cluster.StartAPIServer(); err != nil {
		t.Fatalf("starting kube-apiserver again: %v", err)
	}
	t.Logf("kube-apiserver was down for %s", time.Since(down).Round(time.Millisecond))
	r.requireRunning(t)

	ctx := context.Background()
	level := queuedLevel("after-restart", 6500)
	schema := userSchema("after-restart", 5000, level.Name)
	harness.Eventually(t, 60*time.Second, "kube-apiserver to admit writes again", func(ctx context.Context) (bool, error) {
		return true, client.IgnoreAlreadyExists(k8s.Create(ctx, level))
	})
	if err := k8s.Create(ctx, schema); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, top); err != nil {
		t.Fatal(err)
	}
	waitReady(t, append(defaultKeys(), "rp/after-restart", "fs/after-restart"))
	if id := identities(t)["rp/system-top"]; id.uid == top.UID {
		t.Error("system-top, deleted after the restart, was not re-created")
	}
	waitProjected(t, level)
	waitProjected(t, schema)
	r.requireRunning(t)
}

// waitProjected waits until obj reports Projected=True and the native object it names exists.
func waitProjected(t *testing.T, obj client.Object) {
	t.Helper()
	harness.Eventually(t, 60*time.Second, obj.GetName()+" projected", func(ctx context.Context) (bool, error) {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		var native client.Object
		var nativeName string
		switch o := obj.(type) {
		case *flowv1.RequestPriority:
			native, nativeName = &flowcontrolv1.PriorityLevelConfiguration{}, o.Status.NativeName
		case *flowv1.FlowSchema:
			native, nativeName = &flowcontrolv1.FlowSchema{}, o.Status.NativeName
		}
		c := meta.FindStatusCondition(harness.Conditions(obj), flowv1.ConditionProjected)
		if c == nil || c.Status != metav1.ConditionTrue || nativeName == "" {
			return false, fmt.Errorf("Projected: %+v", c)
		}
		return true, k8s.Get(ctx, client.ObjectKey{Name: nativeName}, native)
	})
}

// TestWebhookDown runs with no replica. Under the chart's failurePolicy Fail every write of a
// RequestPriority is refused; with the webhook bypassed (failurePolicy Ignore, as while the
// webhook configuration is being installed or edited) the CRD's CEL rules still reject what
// they cover, and what only the webhook checks is stored and reported in status once the
// operator is back: a duplicate level, a missing reference, a hand size over the 2^60 bound.
func TestWebhookDown(t *testing.T) {
	resetCluster(t)
	ctx := context.Background()
	if err := k8s.Create(ctx, queuedLevel("while-down", 4000)); !isUnreachable(err) {
		t.Fatalf("with no webhook and failurePolicy Fail, creating a RequestPriority gave %v; want a failed webhook call", err)
	}
	setFailurePolicy(t, admissionregistrationv1.Ignore)
	t.Cleanup(func() { setFailurePolicy(t, admissionregistrationv1.Fail) })

	celInvalid := queuedLevel("hand-over-queues", 4100)
	celInvalid.Spec.QueuesPerWidth, celInvalid.Spec.HandSize = ptr.To[int32](4), ptr.To[int32](5)
	if err := k8s.Create(ctx, celInvalid); err == nil || !strings.Contains(err.Error(), "spec.handSize: Invalid value: must not exceed queuesPerWidth") {
		t.Fatalf("creating a RequestPriority whose hand is larger than its queues with the webhook down: %v; want the CEL rule's error", err)
	}
	older, duplicate := queuedLevel("dup-a", 4200), queuedLevel("dup-b", 4200)
	bigHand := tooBigAHand("big-hand", 4300)
	dangling := userSchema("dangling", 6000, "no-such-level")
	for _, o := range []client.Object{older, duplicate, bigHand, dangling} {
		if err := k8s.Create(ctx, o); err != nil {
			t.Fatalf("creating %s with the webhook bypassed: %v", o.GetName(), err)
		}
	}

	r := startReplica(t, "replica", shortLease.args()...)
	front.setBackends(r.webhookAddr)
	waitReason(t, older, metav1.ConditionTrue, flowv1.ReasonAccepted)
	waitReason(t, duplicate, metav1.ConditionFalse, flowv1.ReasonDuplicatePriorityLevel)
	waitReason(t, bigHand, metav1.ConditionFalse, flowv1.ReasonInvalidSpec)
	waitReason(t, dangling, metav1.ConditionFalse, flowv1.ReasonRequestPriorityNotFound)
}

// setFailurePolicy sets the failure policy of every webhook of the installed configuration and
// waits until kube-apiserver applies it. No replica may be serving: the probe, a dry-run create,
// must then fail to reach a webhook under Fail and pass under Ignore.
func setFailurePolicy(t *testing.T, policy admissionregistrationv1.FailurePolicyType) {
	t.Helper()
	ctx := context.Background()
	var cfg admissionregistrationv1.ValidatingWebhookConfiguration
	if err := k8s.Get(ctx, client.ObjectKey{Name: webhookConfig}, &cfg); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(cfg.DeepCopy())
	for i := range cfg.Webhooks {
		cfg.Webhooks[i].FailurePolicy = &policy
	}
	if err := k8s.Patch(ctx, &cfg, patch); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "kube-apiserver to apply failurePolicy "+string(policy), func(ctx context.Context) (bool, error) {
		err := k8s.Create(ctx, queuedLevel("policy-probe", 3999), client.DryRunAll)
		if policy == admissionregistrationv1.Ignore {
			return err == nil, err
		}
		if !isUnreachable(err) {
			return false, fmt.Errorf("the probe got %v, want a failed webhook call", err)
		}
		return true, nil
	})
}

// webhookConfig is the name controller-gen gives the webhook configuration in config/webhook,
// which the harness installs.
const webhookConfig = "validating-webhook-configuration"

// userSchema returns a FlowSchema that sends the requests of the user named like it to level.
func userSchema(name string, matchingPriority int32, level string) *flowv1.FlowSchema {
	return &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: matchingPriority, RequestPriority: flowv1.RequestPriorityReference{Name: level},
		Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{{Equals: &flowv1.ValueTest{Field: "user", Value: name}}}}}}}
}
