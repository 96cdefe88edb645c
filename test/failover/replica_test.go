package failover

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
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
		"--leader-election-retry-period=" + l.retry.String()}
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
	eventually(t, 60*time.Second, "replica "+r.name+" to serve webhooks", func(context.Context) (bool, error) {
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// metrics scrapes the replica's /metrics (HTTPS with Kubernetes authentication, as the chart
// serves it).
func (r *replica) metrics(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://"+r.metricsAddr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+metricsToken)
	// The metrics server's certificate is self-signed; the token is what is checked here.
	httpClient := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a test scraping its own child process
	var resp *http.Response
	eventually(t, 60*time.Second, "the metrics of replica "+r.name, func(context.Context) (bool, error) {
		var err error
		if resp, err = httpClient.Do(req); err != nil {
			return false, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return false, fmt.Errorf("GET /metrics: %s", resp.Status)
		}
		return true, nil
	})
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the metrics of replica %s: %v", r.name, err)
	}
	return families
}

// sum adds the values of every sample of the family whose labels include the given ones.
func sum(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	total := 0.0
	for _, m := range families[name].GetMetric() {
		if hasLabels(m, labels) {
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return total
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(want)
}

// isLeader reports whether the replica's metrics say it holds the Lease.
func isLeader(families map[string]*dto.MetricFamily) bool {
	return sum(families, "leader_election_master_status", map[string]string{"name": leaseName}) == 1
}

// reconciles is the number of reconciles the replica's controllers ran.
func reconciles(families map[string]*dto.MetricFamily) float64 {
	return sum(families, "controller_runtime_reconcile_total", nil)
}

// webhookCalls is the number of admission requests the replica's webhook server answered.
func webhookCalls(families map[string]*dto.MetricFamily) float64 {
	return sum(families, "controller_runtime_webhook_requests_total", nil)
}

// setUpNamespaceAndMetricsReader creates the operator's namespace and a service account allowed
// to GET /metrics, and returns a token of it.
func setUpNamespaceAndMetricsReader(ctx context.Context) (string, error) {
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: metricsReader, Namespace: namespace}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: metricsReader},
			Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: metricsReader},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReader},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: metricsReader, Namespace: namespace}}},
	}
	for _, o := range objs {
		if err := k8s.Create(ctx, o); err != nil {
			return "", fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, metricsReader, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for %s: %w", metricsReader, err)
	}
	return tr.Status.Token, nil
}

// resetCluster starts a test from an empty configuration: no RequestPriority or FlowSchema
// objects, no Lease left by a killed leader, the balancer without backends or delay. Replicas
// of earlier tests are stopped by their cleanups.
func resetCluster(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	front.setBackends()
	front.setDelay(0)
	if err := k8s.DeleteAllOf(ctx, &flowv1.FlowSchema{}); err != nil {
		t.Fatal(err)
	}
	if err := k8s.DeleteAllOf(ctx, &flowv1.RequestPriority{}); err != nil {
		t.Fatal(err)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: leaseName, Namespace: namespace}}
	if err := k8s.Delete(ctx, lease); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "an empty configuration", func(ctx context.Context) (bool, error) {
		n, err := countObjects(ctx)
		return n == 0, err
	})
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
