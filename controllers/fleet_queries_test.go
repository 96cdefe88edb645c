package controllers

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// testClusterLabel is the cluster label the chart is rendered with: not the default, so the
// test sees that the value reaches every query.
const testClusterLabel = "fleet_cluster"

// defaultRunbookURL is values.yaml's prometheusRule.runbookURL.
const defaultRunbookURL = "https://github.com/apf-operator/apf-operator/blob/main/docs/troubleshooting.md"

// renderChartTemplate renders one template of the chart with the fleet view on.
func renderChartTemplate(t *testing.T, template string) []byte {
	t.Helper()
	helm, err := envtestutil.Tool("helm")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helm, "template", "fleet", filepath.Join(envtestutil.RepoRoot(), "charts", "apf-operator"),
		"--namespace", "apf-system", "--show-only", template,
		"--set", "grafanaDashboard.enabled=true", "--set", "prometheusRule.enabled=true",
		"--set", "grafanaDashboard.clusterLabel="+testClusterLabel, "--set", "prometheusRule.clusterLabel="+testClusterLabel)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template --show-only %s: %v\n%s", template, err, stderr.String())
	}
	return out
}

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int    `json:"id"`
	Title      string `json:"title"`
	Type       string `json:"type"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // of a collapsed row
}

// renderedDashboard is the dashboard JSON of the chart's ConfigMap.
func renderedDashboard(t *testing.T) dashboard {
	t.Helper()
	var cm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string            `json:"name"`
			Namespace string            `json:"namespace"`
			Labels    map[string]string `json:"labels"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}
	if err := yaml.UnmarshalStrict(renderChartTemplate(t, "templates/grafana-dashboard.yaml"), &cm); err != nil {
		t.Fatalf("the dashboard ConfigMap: %v", err)
	}
	if cm.Kind != "ConfigMap" || cm.Metadata.Labels["grafana_dashboard"] != "1" {
		t.Errorf("the dashboard renders as a %s with labels %v, want a ConfigMap labelled grafana_dashboard: \"1\"",
			cm.Kind, cm.Metadata.Labels)
	}
	raw, ok := cm.Data["apf-operator-fleet.json"]
	if !ok {
		t.Fatalf("the ConfigMap has no apf-operator-fleet.json: keys %v", cm.Data)
	}
	if strings.Contains(raw, "__CLUSTER_LABEL__") {
		t.Error("the rendered dashboard still holds the __CLUSTER_LABEL__ placeholder")
	}
	var d dashboard
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	return d
}

// grafanaVariable matches $name, ${name} and ${name:format} in a Grafana query.
var grafanaVariable = regexp.MustCompile(`\$(?:\{(\w+)(?::\w+)?\}|(\w+))`)

// expandGrafanaVariables turns a Grafana query into PromQL: interval variables become 5m,
// every other variable (used in a regular-expression matcher) .*.
func expandGrafanaVariables(q string) string {
	return grafanaVariable.ReplaceAllStringFunc(q, func(v string) string {
		if strings.HasPrefix(strings.TrimPrefix(v, "${"), "$__") || strings.HasPrefix(v, "${__") {
			return "5m"
		}
		return ".*"
	})
}

// dashboardQueries returns every PromQL query of the dashboard, by where it is.
func dashboardQueries(t *testing.T, d dashboard) map[string]string {
	t.Helper()
	queries := map[string]string{}
	ids := map[int]string{}
	var walk func([]panel)
	walk = func(panels []panel) {
		for _, p := range panels {
			if other, dup := ids[p.ID]; dup || p.ID == 0 {
				t.Errorf("panel %q: id %d is zero or also %q's", p.Title, p.ID, other)
			}
			ids[p.ID] = p.Title
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q does not use the dashboard's datasource variable", p.Title)
			}
			for _, tg := range p.Targets {
				queries["panel "+p.Title+" "+tg.RefID] = expandGrafanaVariables(tg.Expr)
			}
		}
	}
	walk(d.Panels)
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: query %s: %v", v.Name, v.Query, err)
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil || m[2] != testClusterLabel {
			t.Errorf("variable %s: query %q is not label_values(<selector>, %s)", v.Name, q.Query, testClusterLabel)
			continue
		}
		queries["variable "+v.Name] = m[1]
	}
	return queries
}

// TestDashboardQueriesNameExportedMetrics parses every query of the shipped dashboard and
// fails on a syntax error or a metric that is not exported.
func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	names := newMetricNames(t)
	queries := dashboardQueries(t, renderedDashboard(t))
	for where, q := range queries {
		unknown, err := names.unknownMetrics(q)
		if err != nil {
			t.Errorf("%s: %q does not parse: %v", where, q, err)
		}
		if len(unknown) > 0 {
			t.Errorf("%s: %q names metrics nothing exports: %v", where, q, unknown)
		}
		if missing := selectorsWithoutMatcher(q, testClusterLabel); len(missing) > 0 && strings.HasPrefix(where, "panel") {
			t.Errorf("%s: selectors %v ignore the cluster variable (no %s matcher)", where, missing, testClusterLabel)
		}
	}
}

// TestDashboardShowsTheFleetView: the dashboard keeps a panel on each part of the fleet view.
func TestDashboardShowsTheFleetView(t *testing.T) {
	d := renderedDashboard(t)
	if d.UID == "" || d.Title == "" {
		t.Errorf("the dashboard has no uid or title: %q, %q", d.UID, d.Title)
	}
	used := usedMetrics(t, dashboardQueries(t, d))
	for _, want := range []string{
		"apf_operator_config_info", "apf_operator_objects", "apf_operator_projection_objects",
		"apf_operator_projection_failed_object", "apf_operator_projection_writes_total",
		"apf_operator_rejected_requests_total", "apiserver_flowcontrol_rejected_requests_total",
		"apf_operator_event_rate_limit_decisions_total", "controller_runtime_webhook_requests_total",
		"controller_runtime_webhook_latency_seconds_bucket",
	} {
		if !used[want] {
			t.Errorf("no dashboard query uses %s", want)
		}
	}
}

func usedMetrics(t *testing.T, queries map[string]string) map[string]bool {
	t.Helper()
	used := map[string]bool{}
	for where, q := range queries {
		names, err := selectorNames(q)
		if err != nil {
			t.Errorf("%s: %v", where, err)
		}
		for _, n := range names {
			used[n] = true
		}
	}
	return used
}

// ruleGroups is the spec of a PrometheusRule, decoded strictly: a misspelt key fails.
type ruleGroups struct {
	Groups []struct {
		Name  string      `json:"name"`
		Rules []alertRule `json:"rules"`
	} `json:"groups"`
}

type alertRule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func renderedRules(t *testing.T) []alertRule {
	t.Helper()
	var pr struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
		Spec       ruleGroups     `json:"spec"`
	}
	if err := yaml.UnmarshalStrict(renderChartTemplate(t, "templates/prometheusrule.yaml"), &pr); err != nil {
		t.Fatalf("the PrometheusRule: %v", err)
	}
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" {
		t.Errorf("rendered %s %s, want monitoring.coreos.com/v1 PrometheusRule", pr.APIVersion, pr.Kind)
	}
	var rules []alertRule
	for _, g := range pr.Spec.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("group %q is unnamed or empty", g.Name)
		}
		rules = append(rules, g.Rules...)
	}
	return rules
}

// prometheusTemplateFuncs are the template functions of Prometheus's alert templates that the
// annotations use (only their names matter to parsing).
var prometheusTemplateFuncs = template.FuncMap{
	"humanize": fmt1, "humanizePercentage": fmt1, "humanizeDuration": fmt1, "humanize1024": fmt1,
}

func fmt1(any) string { return "" }

// TestAlertRules checks every alert: its expression parses and names exported metrics, its
// for is a duration, it has a severity, a summary, a description that parse as templates, and
// a runbook link to a heading of docs/troubleshooting.md.
func TestAlertRules(t *testing.T) {
	names := newMetricNames(t)
	anchors := markdownAnchors(t, filepath.Join(envtestutil.RepoRoot(), "docs", "troubleshooting.md"))
	seen := map[string]bool{}
	for _, r := range renderedRules(t) {
		if r.Alert == "" || seen[r.Alert] {
			t.Errorf("alert %q: empty or duplicate name", r.Alert)
		}
		seen[r.Alert] = true
		if unknown, err := names.unknownMetrics(r.Expr); err != nil || len(unknown) > 0 {
			t.Errorf("alert %s: %q: parse error %v, unknown metrics %v", r.Alert, r.Expr, err, unknown)
		}
		if strings.Contains(r.Expr+r.Annotations["description"], "__CLUSTER_LABEL__") {
			t.Errorf("alert %s still holds the __CLUSTER_LABEL__ placeholder", r.Alert)
		}
		if d, err := model.ParseDuration(r.For); err != nil || d == 0 {
			t.Errorf("alert %s: for %q is not a positive duration (%v)", r.Alert, r.For, err)
		}
		if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
			t.Errorf("alert %s: severity %q", r.Alert, r.Labels["severity"])
		}
		checkAnnotations(t, r, anchors)
	}
	for _, want := range []string{"ApfOperatorConfigDrift", "ApfOperatorObjectsNotReady", "ApfOperatorProjectionFailed",
		"ApfOperatorWebhookErrors", "ApfOperatorWebhookSlow", "ApfOperatorNativeRejections", "ApfOperatorEventRejections",
		"ApfOperatorProjectionWriteErrors", "ApfOperatorFilterRejections", "ApfOperatorConfigurationsDiverge"} {
		if !seen[want] {
			t.Errorf("no alert %s", want)
		}
	}
}

func checkAnnotations(t *testing.T, r alertRule, anchors map[string]bool) {
	t.Helper()
	for _, key := range []string{"summary", "description"} {
		text := r.Annotations[key]
		if text == "" {
			t.Errorf("alert %s has no %s", r.Alert, key)
		}
		// Prometheus defines these variables ahead of every alert template.
		defs := "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}"
		if _, err := template.New(key).Funcs(prometheusTemplateFuncs).Parse(defs + text); err != nil {
			t.Errorf("alert %s: %s is not a valid template: %v", r.Alert, key, err)
		}
	}
	url, anchor, _ := strings.Cut(r.Annotations["runbook_url"], "#")
	if url != defaultRunbookURL || !anchors[anchor] {
		t.Errorf("alert %s: runbook_url %q is not %s#<a heading of it>", r.Alert, r.Annotations["runbook_url"], defaultRunbookURL)
	}
}

// markdownAnchors returns the GitHub anchors of the headings of a Markdown file.
func markdownAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if heading, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			anchors[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(heading), ""), " ", "-")] = true
		}
	}
	return anchors
}

// TestMetricCheckRejectsUnknownNames: the check the dashboard and alert tests rely on fails on
// a misspelt name from each source, and accepts the real ones.
func TestMetricCheckRejectsUnknownNames(t *testing.T) {
	names := newMetricNames(t)
	for _, name := range []string{"apf_operator_config_infos", "controller_runtime_webhook_request_total",
		"apiserver_flowcontrol_rejected_request_total", "apf_operator_projection_failed_objects"} {
		if unknown, err := names.unknownMetrics("sum(rate(" + name + "[5m]))"); err != nil || !slices.Equal(unknown, []string{name}) {
			t.Errorf("%s: unknown %v, error %v; want it reported unknown", name, unknown, err)
		}
	}
	for _, name := range []string{"apf_operator_config_info", "apf_operator_rejected_requests_total",
		"apf_operator_event_rate_limit_events_total", "controller_runtime_webhook_latency_seconds_bucket",
		"controller_runtime_reconcile_errors_total", "workqueue_depth", "apiserver_flowcontrol_dispatched_requests_total"} {
		if unknown, err := names.unknownMetrics(name); err != nil || len(unknown) > 0 {
			t.Errorf("%s: unknown %v, error %v; want it exported", name, unknown, err)
		}
	}
	if _, err := names.unknownMetrics(`{__name__=~"apf_.*"}`); err == nil {
		t.Error("a selector without a metric name passed")
	}
	if _, err := names.unknownMetrics(`sum(rate(apf_operator_objects[5m])`); err == nil {
		t.Error("an expression with a syntax error passed")
	}
}
