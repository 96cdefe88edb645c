package failover

import (
	"context"
	"net"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/test/harness"
)

const (
	namespace = "apf-system"
	// leaseName is the manager's default --leader-election-id.
	leaseName = "apf-operator.flowcontrol.apf-operator.io"
	// metricsReader is the service account whose token reads the replicas' /metrics.
	metricsReader = "metrics-reader"
)

// leaseTimes are short leader-election settings, so that a takeover takes seconds; the renew
// deadline still leaves a loaded two-core machine four tries to renew.
type leaseTimes struct{ duration, renew, retry time.Duration }

var shortLease = leaseTimes{duration: 6 * time.Second, renew: 4 * time.Second, retry: time.Second}

func (l leaseTimes) args() []string {
	return []string{"--leader-elect=true",
		"--leader-election-lease-duration=" + l.duration.String(),
		"--leader-election-renew-deadline=" + l.renew.String(),
		"--leader-election-retry-period=" + l.retry.String(),
		// The tests create dozens of levels; the share budget is not what they check.
		"--native-max-seat-loss-percent=90"}
}

// replica is one apf-operator process with its own webhook and metrics ports.
type replica struct {
	name        string
	op          *harness.Operator
	webhookAddr string
	metricsAddr string
}

// startReplica starts the operator binary against the cluster, serving webhooks on a port of
// its own (the balancer's backends) and metrics on another; extra flags come last and win.
func startReplica(t *testing.T, name string, extra ...string) *replica {
	t.Helper()
	r := &replica{name: name, webhookAddr: freeAddr(t), metricsAddr: freeAddr(t)}
	_, webhookPort, _ := net.SplitHostPort(r.webhookAddr)
	args := append(cluster.OperatorArgs(r.metricsAddr), "--webhook-port", webhookPort)
	op, err := cluster.StartOperator(binary, append(args, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	r.op = op
	t.Cleanup(func() {
		if exited, _ := r.op.Exited(); !exited {
			_ = r.op.Stop(20 * time.Second)
		}
		if t.Failed() {
			t.Logf("log of replica %s:\n%s", r.name, r.op.ReadLog())
		}
	})
	return r
}

// kill sends SIGKILL, as a node failure or the OOM killer would, and waits for the exit.
func (r *replica) kill(t *testing.T) {
	t.Helper()
	if err := r.op.Kill(); err != nil {
		t.Fatalf("killing replica %s: %v", r.name, err)
	}
}

// requireRunning fails the test if the process has ended.
func (r *replica) requireRunning(t *testing.T) {
	t.Helper()
	if exited, err := r.op.Exited(); exited {
		t.Fatalf("replica %s exited: %v", r.name, err)
	}
}

// waitServing waits until the replica's webhook server accepts connections.
func (r *replica) waitServing(t *testing.T) {
	t.Helper()
	harness.Eventually(t, 60*time.Second, "replica "+r.name+" to serve webhooks", func(context.Context) (bool, error) {
		r.requireRunning(t)
		c, err := net.DialTimeout("tcp", r.webhookAddr, time.Second)
		if err != nil {
			return false, err
		}
		return true, c.Close()
	})
}

// freeAddr returns a loopback address with a port nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := harness.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// resetCluster starts a test from an empty configuration: no RequestPriority or FlowSchema
// objects, no Lease left by a killed leader, the balancer without backends or delay, the
// webhooks' failurePolicy Fail. Replicas of earlier tests are stopped by their cleanups.
func resetCluster(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	front.setBackends()
	front.setDelay(0)
	// Deletes pass even if a webhook guards them, while no replica serves.
	setFailurePolicy(t, admissionregistrationv1.Ignore)
	if err := k8s.DeleteAllOf(ctx, &flowv1.FlowSchema{}); err != nil {
		t.Fatal(err)
	}
	if err := k8s.DeleteAllOf(ctx, &flowv1.RequestPriority{}); err != nil {
		t.Fatal(err)
	}
	setFailurePolicy(t, admissionregistrationv1.Fail)
	deleteLease(t)
	harness.Eventually(t, 30*time.Second, "an empty configuration", func(ctx context.Context) (bool, error) {
		n, err := countObjects(ctx)
		return n == 0, err
	})
}

// deleteLease deletes the leader-election Lease, if any: a Lease a killed replica left would
// hold the next replica back for the lease duration.
func deleteLease(t *testing.T) {
	t.Helper()
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: leaseName, Namespace: namespace}}
	if err := k8s.Delete(context.Background(), lease); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// countObjects returns how many RequestPriority and FlowSchema objects exist.
func countObjects(ctx context.Context) (int, error) {
	var rps flowv1.RequestPriorityList
	var fss flowv1.FlowSchemaList
	if err := k8s.List(ctx, &rps); err != nil {
		return 0, err
	}
	if err := k8s.List(ctx, &fss); err != nil {
		return 0, err
	}
	return len(rps.Items) + len(fss.Items), nil
}

// leaseHolder returns the Lease's holder identity and last renewal ("" and zero if none).
func leaseHolder(ctx context.Context) (string, time.Time, error) {
	var lease coordinationv1.Lease
	err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: leaseName}, &lease)
	if apierrors.IsNotFound(err) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, err
	}
	var renewed time.Time
	if lease.Spec.RenewTime != nil {
		renewed = lease.Spec.RenewTime.Time
	}
	return ptr.Deref(lease.Spec.HolderIdentity, ""), renewed, nil
}
