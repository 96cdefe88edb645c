package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/test/harness"
)

// The negative checks of the journey ("nothing was written") wait for a barrier read from the
// operator's own metrics, never for a fixed time: the operator has reconciled what it had to
// (controller_runtime_reconcile_total) and nothing is queued or in flight (workqueue_depth,
// controller_runtime_active_workers). Under load the barrier only comes later; it cannot pass
// before the operator had its chance to write.

// Controllers of the operator, as they name themselves (controllers/*: Named).
const (
	controllerRequestPriorities = "requestpriority-status"
	controllerFlowSchemas       = "flowschema-status"
	controllerProjection        = "apf-projection"
	controllerDefaults          = "apf-defaults"
)

// operatorWork is what the operator's metrics say about its controllers.
type operatorWork struct {
	reconciles map[string]float64 // by controller, since the process started
	queued     float64            // items waiting in the work queues
	inFlight   float64            // reconciles running
}

// waitReconciled waits until each controller in atLeast has reconciled at least that many
// times since the operator started and the operator then has nothing queued or in flight.
// It returns the reconcile counts at that point.
func waitReconciled(t *testing.T, atLeast map[string]float64) map[string]float64 {
	t.Helper()
	var last operatorWork
	harness.Eventually(t, 2*time.Minute, fmt.Sprintf("the operator to reconcile at least %v and go idle", atLeast),
		func(ctx context.Context) (bool, error) {
			var err error
			if last, err = scrapeOperator(ctx); err != nil {
				return false, err
			}
			for c, n := range atLeast {
				if last.reconciles[c] < n {
					return false, fmt.Errorf("%s has reconciled %v times", c, last.reconciles[c])
				}
			}
			if last.queued > 0 || last.inFlight > 0 {
				return false, fmt.Errorf("%v queued, %v in flight", last.queued, last.inFlight)
			}
			return true, nil
		})
	t.Logf("the operator is idle after these reconciles: %v", last.reconciles)
	return last.reconciles
}

// reconcileCounts returns the operator's reconciles by controller so far.
func reconcileCounts(t *testing.T) map[string]float64 {
	t.Helper()
	w, err := scrapeOperator(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return w.reconciles
}

// plus returns counts with n added to each of the named controllers.
func plus(counts map[string]float64, n float64, controllers ...string) map[string]float64 {
	out := maps.Clone(counts)
	for _, c := range controllers {
		out[c] += n
	}
	return out
}

var (
	metricsTokenOnce sync.Once
	metricsToken     string
	metricsTokenErr  error
)

// scrapeOperator reads the operator's /metrics (HTTPS with Kubernetes authentication, as the
// chart serves it), with the token of a service account allowed to read them.
func scrapeOperator(ctx context.Context) (operatorWork, error) {
	metricsTokenOnce.Do(func() {
		metricsToken, metricsTokenErr = harness.MetricsReaderToken(context.Background(), cluster.Config,
			"e2e-metrics", "e2e-metrics-reader", 2*time.Hour)
	})
	if metricsTokenErr != nil {
		return operatorWork{}, metricsTokenErr
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+metricsAddr+"/metrics", nil)
	if err != nil {
		return operatorWork{}, err
	}
	req.Header.Set("Authorization", "Bearer "+metricsToken)
	// The metrics server's certificate is self-signed; the token is what is checked here.
	httpClient := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a test scraping its own child process
	resp, err := httpClient.Do(req)
	if err != nil {
		return operatorWork{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return operatorWork{}, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	families, err := harness.ParseMetrics(resp.Body)
	if err != nil {
		return operatorWork{}, err
	}
	w := operatorWork{reconciles: map[string]float64{}}
	for _, m := range families["controller_runtime_reconcile_total"].GetMetric() {
		w.reconciles[harness.MetricLabel(m, "controller")] += m.GetCounter().GetValue()
	}
	for _, m := range families["workqueue_depth"].GetMetric() {
		w.queued += m.GetGauge().GetValue()
	}
	for _, m := range families["controller_runtime_active_workers"].GetMetric() {
		w.inFlight += m.GetGauge().GetValue()
	}
	if len(w.reconciles) == 0 {
		return operatorWork{}, fmt.Errorf("the operator's metrics have no controller_runtime_reconcile_total")
	}
	return w, nil
}
