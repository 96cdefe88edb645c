package failover

import (
	"bytes"
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/apf-operator/apf-operator/test/harness"
)

// metrics scrapes the replica's /metrics (HTTPS with Kubernetes authentication, as the chart
// serves it).
func (r *replica) metrics(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	var body []byte
	harness.Eventually(t, 60*time.Second, "the metrics of replica "+r.name, func(ctx context.Context) (err error) {
		body, err = harness.OperatorMetrics(ctx, r.metricsAddr, metricsToken)
		return err
	})
	families, err := harness.ParseMetrics(bytes.NewReader(body))
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
