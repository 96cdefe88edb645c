package alerts

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/promqltest"
)

// clusterLabel stands for the chart's prometheusRule.clusterLabel.
const clusterLabel = "cluster"

// rulesFile is the chart's alert file, relative to this package.
var rulesFile = filepath.Join("..", "..", "charts", "apf-operator", "files", "prometheus-rules.yaml")

// alertCase is one situation for one alert: the series loaded (promqltest's load syntax, one
// sample a minute from time 0 to 3 hours, longer than every alert's for:), and the alert
// expression's result at 20 minutes: the series it fires for (promqltest's expected-result
// syntax), none when the alert stays silent.
type alertCase struct {
	name   string
	series []string
	fires  []string
}

// alertCases are the situations of every alert of the chart.
var alertCases = map[string][]alertCase{
	"ApfOperatorObjectsNotReady": {
		{"objects not ready", []string{
			`apf_operator_objects{cluster="a", kind="FlowSchema", ready="false", reason="RequestPriorityNotFound"} 2+0x180`,
			`apf_operator_objects{cluster="a", kind="FlowSchema", ready="true", reason="Accepted"} 9+0x180`,
		}, []string{`{cluster="a", kind="FlowSchema", reason="RequestPriorityNotFound"} 2`}},
		{"in a cluster's own Prometheus, without the cluster label", []string{
			`apf_operator_objects{kind="RequestPriority", ready="false", reason="DuplicatePriorityLevel"} 1+0x180`,
		}, []string{`{kind="RequestPriority", reason="DuplicatePriorityLevel"} 1`}},
		{"every object ready", []string{
			`apf_operator_objects{cluster="a", kind="FlowSchema", ready="false", reason="RequestPriorityNotFound"} 0+0x180`,
			`apf_operator_objects{cluster="a", kind="FlowSchema", ready="true", reason="Accepted"} 9+0x180`,
		}, nil},
	},
	"ApfOperatorProjectionFailed": {
		{"an object not expressible", []string{
			`apf_operator_projection_objects{cluster="a", kind="FlowSchema", state="NotExpressible"} 1+0x180`,
			`apf_operator_projection_objects{cluster="a", kind="FlowSchema", state="projected"} 5+0x180`,
			`apf_operator_projection_objects{cluster="a", kind="FlowSchema", state="NotInEffect"} 3+0x180`,
		}, []string{`{cluster="a", kind="FlowSchema", state="NotExpressible"} 1`}},
		{"only projected objects and objects not in effect", []string{
			`apf_operator_projection_objects{cluster="a", kind="FlowSchema", state="projected"} 5+0x180`,
			`apf_operator_projection_objects{cluster="a", kind="FlowSchema", state="NotInEffect"} 3+0x180`,
		}, nil},
	},
	"ApfOperatorProjectionWriteErrors": {
		{"failing writes", []string{
			`apf_operator_projection_writes_total{cluster="a", kind="FlowSchema", operation="update", result="error"} 0+3x180`,
			`apf_operator_projection_writes_total{cluster="a", kind="FlowSchema", operation="update", result="success"} 0+1x180`,
		}, []string{`{cluster="a", kind="FlowSchema", operation="update"} 0.05`}},
		{"errors long ago", []string{
			`apf_operator_projection_writes_total{cluster="a", kind="FlowSchema", operation="update", result="error"} 0+3x5 15+0x175`,
			`apf_operator_projection_writes_total{cluster="a", kind="FlowSchema", operation="update", result="success"} 0+1x180`,
		}, nil},
	},
	"ApfOperatorWebhookErrors": {
		{"one admission in ten fails", []string{
			`controller_runtime_webhook_requests_total{cluster="a", webhook="/validate-flowcontrol-apf-operator-io-v1alpha1-flowschema", code="500"} 0+6x180`,
			`controller_runtime_webhook_requests_total{cluster="a", webhook="/validate-flowcontrol-apf-operator-io-v1alpha1-flowschema", code="200"} 0+54x180`,
		}, []string{`{cluster="a", webhook="/validate-flowcontrol-apf-operator-io-v1alpha1-flowschema"} 0.1`}},
		{"one in a hundred, and another server's webhook failing", []string{
			`controller_runtime_webhook_requests_total{cluster="a", webhook="/validate-flowcontrol-apf-operator-io-v1alpha1-flowschema", code="500"} 0+1x180`,
			`controller_runtime_webhook_requests_total{cluster="a", webhook="/validate-flowcontrol-apf-operator-io-v1alpha1-flowschema", code="200"} 0+99x180`,
			`controller_runtime_webhook_requests_total{cluster="a", webhook="/validate-other", code="500"} 0+50x180`,
		}, nil},
	},
	"ApfOperatorWebhookSlow": {
		// p99 is interpolated within the 1–2.5 s bucket: 1 + 1.5 × 0.99.
		{"admissions take up to 2.5 s", histogram("/validate-events", 0, 0, 60),
			[]string{`{cluster="a", webhook="/validate-events"} 2.485`}},
		{"admissions take under 0.5 s", histogram("/validate-events", 60, 60, 60), nil},
	},
	"ApfOperatorNativeRejections": {
		{"a projected level rejects one request in ten", []string{
			`apiserver_flowcontrol_rejected_requests_total{cluster="a", priority_level="apf-tenants", reason="queue-full"} 0+10x180`,
			`apiserver_flowcontrol_dispatched_requests_total{cluster="a", priority_level="apf-tenants"} 0+90x180`,
			`apiserver_flowcontrol_rejected_requests_total{cluster="a", priority_level="workload-low", reason="queue-full"} 0+90x180`,
			`apiserver_flowcontrol_dispatched_requests_total{cluster="a", priority_level="workload-low"} 0+10x180`,
		}, []string{`{cluster="a", priority_level="apf-tenants"} 0.1`}},
		{"only kube-apiserver's own levels reject", []string{
			`apiserver_flowcontrol_dispatched_requests_total{cluster="a", priority_level="apf-tenants"} 0+90x180`,
			`apiserver_flowcontrol_rejected_requests_total{cluster="a", priority_level="workload-low", reason="queue-full"} 0+90x180`,
			`apiserver_flowcontrol_dispatched_requests_total{cluster="a", priority_level="workload-low"} 0+10x180`,
		}, nil},
	},
	"ApfOperatorFilterRejections": {
		{"a level rejects one request in five", []string{
			`apf_operator_rejected_requests_total{cluster="a", priority_level="tenants", flow_schema="t", reason="queue-full"} 0+20x180`,
			`apf_operator_dispatched_requests_total{cluster="a", priority_level="tenants", flow_schema="t"} 0+80x180`,
		}, []string{`{cluster="a", priority_level="tenants"} 0.2`}},
		{"one in a hundred", []string{
			`apf_operator_rejected_requests_total{cluster="a", priority_level="tenants", flow_schema="t", reason="queue-full"} 0+1x180`,
			`apf_operator_dispatched_requests_total{cluster="a", priority_level="tenants", flow_schema="t"} 0+99x180`,
		}, nil},
	},
	"ApfOperatorEventRejections": {
		{"half the events rejected", []string{
			`apf_operator_event_rate_limit_events_total{cluster="a", result="rejected"} 0+50x180`,
			`apf_operator_event_rate_limit_events_total{cluster="a", result="allowed"} 0+50x180`,
		}, []string{`{cluster="a"} 0.5`}},
		{"one in ten", []string{
			`apf_operator_event_rate_limit_events_total{cluster="a", result="rejected"} 0+10x180`,
			`apf_operator_event_rate_limit_events_total{cluster="a", result="allowed"} 0+90x180`,
		}, nil},
	},
	"ApfOperatorConfigDrift": {
		{"one cluster of four differs", []string{
			configInfo("a", "x", "p1"), configInfo("a", "x", "p2"), configInfo("b", "x", "p1"),
			configInfo("c", "x", "p1"), configInfo("d", "y", "p1"), configInfo("d", "y", "p2"),
		}, []string{`{cluster="d", digest="y"} 1`}},
		{"the minority's duplicate scrapes do not make it the majority", []string{
			configInfo("a", "x", "p1"), configInfo("b", "x", "p1"),
			configInfo("c", "y", "p1"), configInfo("c", "y", "p2"), configInfo("c", "y", "p3"),
		}, []string{`{cluster="c", digest="y"} 1`}},
		{"no majority: two against two", []string{
			configInfo("a", "x", "p1"), configInfo("b", "x", "p1"), configInfo("c", "y", "p1"), configInfo("d", "y", "p1"),
		}, nil},
		{"one cluster's own Prometheus, without the cluster label", []string{
			`apf_operator_config_info{digest="y"} 1+0x180`,
		}, nil},
		{"every cluster alike", []string{configInfo("a", "x", "p1"), configInfo("b", "x", "p1"), configInfo("b", "x", "p2")}, nil},
	},
	"ApfOperatorConfigurationsDiverge": {
		{"two configurations", []string{configInfo("a", "x", "p1"), configInfo("b", "x", "p1"), configInfo("c", "y", "p1")},
			[]string{`{} 2`}},
		{"one configuration, scraped twice", []string{configInfo("a", "x", "p1"), configInfo("a", "x", "p2"), configInfo("b", "x", "p1")}, nil},
	},
}

// configInfo is the info series of cluster's leader with digest, as scraped by one of
// several Prometheus replicas (a replicated scrape duplicates the series).
func configInfo(cluster, digest, replica string) string {
	return fmt.Sprintf(`apf_operator_config_info{cluster=%q, digest=%q, prometheus_replica=%q} 1+0x180`, cluster, digest, replica)
}

// histogram is the latency histogram of webhook: per minute, fast admissions within 0.5 s,
// medium within 1 s and slow within 2.5 s (cumulative counts: fast <= medium <= slow, the total).
func histogram(webhook string, fast, medium, slow int) []string {
	series := make([]string, 0, 4)
	cumulative := 0
	for _, b := range []struct {
		le    string
		count int
	}{{"0.5", fast}, {"1", medium - fast}, {"2.5", slow - medium}, {"+Inf", 0}} {
		cumulative += b.count
		series = append(series, fmt.Sprintf(`controller_runtime_webhook_latency_seconds_bucket{cluster="a", webhook=%q, le=%q} 0+%dx180`,
			webhook, b.le, cumulative))
	}
	return series
}

// TestAlertsFireOnTheirSituations evaluates every alert of the chart's rule file with
// Prometheus's engine: it fires, with the expected labels and value, on the situation it
// describes, and stays silent on a near one. An alert without cases fails the test.
func TestAlertsFireOnTheirSituations(t *testing.T) {
	rules := loadRules(t)
	for name, rule := range rules {
		cases, ok := alertCases[name]
		if !ok {
			t.Errorf("alert %s has no case in this test: add the situations it fires on", name)
			continue
		}
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				promqltest.RunTest(t, script(c, rule.Expr), promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery))
			})
		}
	}
	for name := range alertCases {
		if _, ok := rules[name]; !ok {
			t.Errorf("this test has cases for alert %s, which the rule file does not have", name)
		}
	}
}

// script is the promqltest script of one case.
func script(c alertCase, expr string) string {
	var b strings.Builder
	b.WriteString(loadScript(c))
	query := strings.Join(strings.Fields(expr), " ")
	fmt.Fprintf(&b, "\neval instant at 20m %s\n", query)
	for _, f := range c.fires {
		b.WriteString("  " + f + "\n")
	}
	return b.String()
}

// loadScript is the promqltest load command of a case's series.
func loadScript(c alertCase) string {
	var b strings.Builder
	b.WriteString("load 1m\n")
	for _, s := range c.series {
		b.WriteString("  " + s + "\n")
	}
	return b.String()
}

// loadRules parses the chart's rule file, as Prometheus does (unknown keys and invalid
// expressions are errors), with the chart's placeholders filled in, and returns each alert
// rule by name.
func loadRules(t *testing.T) map[string]rulefmt.Rule {
	t.Helper()
	data, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	content := strings.NewReplacer("__CLUSTER_LABEL__", clusterLabel, "__RUNBOOK_URL__", "https://example.com/runbook").
		Replace(string(data))
	groups, errs := rulefmt.Parse([]byte(content), false, model.UTF8Validation)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", rulesFile, errs)
	}
	out := map[string]rulefmt.Rule{}
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			if _, dup := out[r.Alert]; dup {
				t.Errorf("alert %s is defined twice", r.Alert)
			}
			out[r.Alert] = r
		}
	}
	if len(out) < 10 {
		t.Fatalf("%s has %d alerts (%v); want the ten of docs/fleet.md", rulesFile, len(out), slices.Sorted(maps.Keys(out)))
	}
	return out
}
