package e2e

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// TestChartEventsWebhookNeedsACallerCheck: helm template cannot look up kube-apiserver's
// addresses, so by default it renders no NetworkPolicy; the events webhook then refuses to turn
// on and names the values to set, and turns on with either caller check.
func TestChartEventsWebhookNeedsACallerCheck(t *testing.T) {
	if n := kinds(renderChart(t))["NetworkPolicy"]; n != 0 {
		t.Errorf("helm template rendered %d NetworkPolicies without known peers; want none", n)
	}
	bin, err := envtestutil.Tool("helm")
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "template", "apf-operator", chartDir(), "--namespace", chartNamespace,
		"--set", "eventRateLimit.enabled=true")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "webhook.clientCA") ||
		!strings.Contains(stderr.String(), "webhook.networkPolicy.from") {
		t.Errorf("eventRateLimit.enabled without a caller check: %v %q; want a failure naming both values", err, stderr.String())
	}
	for _, check := range []string{"webhook.clientCA.configMapName=ca", "webhook.networkPolicy.from[0].ipBlock.cidr=10.0.0.0/28"} {
		if names := webhookNames(t, renderChart(t, "eventRateLimit.enabled=true", check)); len(names) != 4 {
			t.Errorf("eventRateLimit.enabled with %s registers %v; want four webhooks", check, names)
		}
	}
}
