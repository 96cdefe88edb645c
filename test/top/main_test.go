// Package top_test proves the commands that read kube-apiserver's flow control live, against
// one real kube-apiserver 1.36.3 (envtest) with the operator running as a process
// (enforcement native):
//
//   - `apf-operator top`: a tenant on a tiny level is flooded until kube-apiserver rejects its
//     requests, and top must show that tenant first, with as many rejections as
//     kube-apiserver's apiserver_flowcontrol_rejected_requests_total counted over the same
//     window (within 5%); then the operator's status summary of that tenant's rejections
//     (status.observed) must reach the same count and not be written again;
//   - `apf-operator recommend`: one of two operator levels is flooded while the other idles,
//     and recommend, reading kube-apiserver live over the flood, must move shares from the
//     idle level to the flooded one, keeping their total.
//
// Each test applies its tenant's levels and deletes them when it ends, so that the next test
// starts from the operator's defaults.
package top_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/test/harness"
)

// kube-apiserver's server concurrency limit is the sum of these two flags: with 150, a level
// of one share gets one seat (kube-apiserver's suggested levels alone hold 245 shares), and
// recommend's flooded level of 2 shares gets 2 seats.
const (
	maxRequestsInflight         = 100
	maxMutatingRequestsInflight = 50
)

// The tenant: user bob lists large ConfigMaps of namespace tenant from floodWorkers goroutines:
// more than the requests the flooded levels hold (2 in tiny, 7 in recommend's hot), so that
// the rest are rejected.
const (
	tenantNamespace  = "tenant"
	tenantConfigMaps = 30
	floodWorkers     = 10
)

// metricsPeriod is the operator's --native-metrics-period: its reads of kube-apiserver's
// rejection counters, summarised into status.observed at most every second read (the default
// 30 s would make the status test wait minutes).
const metricsPeriod = 2 * time.Second

var suite = &harness.Suite{
	Name:         "top",
	ControlPlane: &harness.ControlPlane{Flags: harness.InflightLimits(maxRequestsInflight, maxMutatingRequestsInflight)},
	RunOperator:  true,
	// recommend's two test levels hold 10 shares: past the default 10% budget at 150 seats.
	OperatorArgs:    []string{"--enforcement=native", "--native-max-seat-loss-percent=50", "--native-metrics-period=" + metricsPeriod.String()},
	OperatorMetrics: true,
	Ready:           ready,
}

// binDir holds the operator binary as kubectl-apf, and kubectl; metricsToken reads the
// operator's metrics endpoint.
var binDir, metricsToken string

func TestMain(m *testing.M) { harness.Main(m, suite) }

// ready makes the plugin directory, the tenant's namespace (every test floods the same
// ConfigMaps) and the token of a reader of the operator's metrics.
func ready(s *harness.Suite) (err error) {
	if err := pluginDir(s); err != nil {
		return err
	}
	ctx := context.Background()
	tenant := strings.NewReader(harness.TenantNamespaceYAML(tenantNamespace, "bob", tenantConfigMaps))
	if _, stderr, err := s.Cluster.KubectlRun(ctx, tenant, "create", "-f", "-"); err != nil {
		return fmt.Errorf("creating the tenant's namespace: %w\n%s", err, stderr)
	}
	metricsToken, err = harness.MetricsReaderToken(ctx, s.Cluster.Config, "top-metrics", "top-metrics-reader", time.Hour)
	return err
}

// pluginDir puts the operator binary on a PATH directory as the kubectl plugin kubectl-apf,
// beside kubectl.
func pluginDir(s *harness.Suite) error {
	binDir = filepath.Join(s.Dir, "bin")
	if err := os.Mkdir(binDir, 0o755); err != nil {
		return err
	}
	if err := os.Symlink(s.Binary, filepath.Join(binDir, "kubectl-apf")); err != nil {
		return err
	}
	return os.Symlink(s.Cluster.Kubectl, filepath.Join(binDir, "kubectl"))
}

// applyTenant applies the tenant's levels, waits until the named objects are projected, and
// deletes them when t ends.
func applyTenant(ctx context.Context, t *testing.T, levels string, projected ...string) {
	t.Helper()
	suite.Cluster.DeleteOnCleanup(t, projected...)
	suite.Cluster.ApplyProjected(ctx, t, levels, projected...)
}

// bobClient is an HTTP client authenticated as bob and the URL he floods.
func bobClient(t *testing.T) (*http.Client, string) {
	t.Helper()
	client, url, err := suite.Cluster.UserClient("bob", tenantNamespace)
	if err != nil {
		t.Fatal(err)
	}
	return client, url
}

// flood lists url from floodWorkers goroutines for d (or until ctx ends) and returns the
// number of 429 responses.
func flood(ctx context.Context, client *http.Client, url string, d time.Duration) int64 {
	return harness.Flood(ctx, client, url, floodWorkers, d)
}
