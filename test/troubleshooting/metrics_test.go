package troubleshooting_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/test/harness"
)

// TestMetricNamesExist requires every metric name the page uses to be served: those of
// kube-apiserver on its /metrics (read with kubectl get --raw), the operator's on its metrics
// endpoint (HTTPS, with a service account token authorized for /metrics, as Prometheus reads it).
// kube-apiserver has no series of rejections and queued requests until it has rejected and
// queued some: the test first provokes that on a level of its own.
func TestMetricNamesExist(t *testing.T) {
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, n := range metricName.FindAllString(string(data), -1) {
		names[n] = true
	}
	if len(names) < 5 {
		t.Fatalf("only %d metric names found on the page: %v", len(names), names)
	}
	dir := t.TempDir()
	provokeRejection(t, dir)
	provokeNotProjected(t, dir)
	token := metricsToken(t, dir)
	var served string
	var missing []string
	// The operator's gauges appear with its first projection, moments after it starts.
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := runCommand(t, dir, suite.Cluster.Kubeconfig, "kubectl get --raw /metrics")
		if r.code != 0 {
			t.Fatalf("kube-apiserver /metrics: exit %d: %s", r.code, r.stderr)
		}
		served, missing = r.stdout+operatorMetrics(t, token), nil
		for n := range names {
			if !servesMetric(served, n) {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	// The page's query selects the projected levels by name: the rejections are counted there.
	if !regexp.MustCompile(`\napiserver_flowcontrol_rejected_requests_total\{[^}]*priority_level="apf-tiny"`).MatchString(served) {
		t.Errorf("no rejection counted against the projected level apf-tiny")
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("metrics named on the page but not served: %v", missing)
		for _, line := range strings.Split(served, "\n") {
			if strings.HasPrefix(line, "# HELP apiserver_flowcontrol") || strings.HasPrefix(line, "# HELP apf_") {
				t.Log(line)
			}
		}
	}
}

// servesMetric reports whether the exposition text has samples (or at least the HELP line) of
// the metric: a histogram's series end in _bucket, _sum and _count.
func servesMetric(text, name string) bool {
	base := strings.TrimSuffix(name, "_bucket")
	return strings.Contains(text, "\n# HELP "+base+" ") || strings.Contains(text, "\n"+name+"{") ||
		strings.Contains(text, "\n"+name+" ")
}

// metricsToken creates a service account allowed to get /metrics and returns a token of it.
func metricsToken(t *testing.T, dir string) string {
	t.Helper()
	runAsAdmin(t, dir,
		"kubectl create serviceaccount metrics-reader",
		"kubectl create clusterrole metrics-reader --verb=get --non-resource-url=/metrics",
		"kubectl create clusterrolebinding metrics-reader --clusterrole=metrics-reader --serviceaccount=default:metrics-reader",
	)
	r := runCommand(t, dir, suite.Cluster.Kubeconfig, "kubectl create token metrics-reader")
	if r.code != 0 {
		t.Fatalf("kubectl create token: exit %d: %s", r.code, r.stderr)
	}
	return strings.TrimSpace(r.stdout)
}

// operatorMetrics reads the operator's /metrics with the token.
func operatorMetrics(t *testing.T, token string) string {
	t.Helper()
	body, err := harness.OperatorMetrics(context.Background(), suite.MetricsAddr, token)
	if err != nil {
		t.Fatalf("operator /metrics: %v", err)
	}
	return "\n" + string(body)
}

// notExpressible is a FlowSchema the native projection cannot express (a test on name): it is
// Ready but Projected=False, so apf_operator_projection_failed_object has a series. The native
// defaults are all projected, so without it the gauge would have none.
const notExpressible = `apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: FlowSchema
metadata: {name: by-object-name}
spec:
  matchingPriority: 7000
  requestPriority: {name: tiny}
  match:
  - and:
    - equals: {field: user, value: carol}
    - equals: {field: name, value: one}
`

// provokeNotProjected applies notExpressible until the test ends.
func provokeNotProjected(t *testing.T, dir string) {
	t.Helper()
	file := filepath.Join(dir, "not-expressible.yaml")
	if err := os.WriteFile(file, []byte(notExpressible), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCommand(t, dir, suite.Cluster.Kubeconfig, "kubectl apply -f "+file); r.code != 0 {
		t.Fatalf("kubectl apply: exit %d\n%s", r.code, r.stderr)
	}
	t.Cleanup(func() {
		if r := runCommand(t, dir, suite.Cluster.Kubeconfig, "kubectl delete -f "+file); r.code != 0 {
			t.Errorf("kubectl delete: exit %d\n%s", r.code, r.stderr)
		}
	})
}
