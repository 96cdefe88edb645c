package controllers

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	flowcontrolmetrics "k8s.io/apiserver/pkg/util/flowcontrol/metrics"
	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	// The webhook server's package registers controller_runtime_webhook_* at init.
	_ "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/apf-operator/apf-operator/controllers/defaults"
	filtermetrics "github.com/apf-operator/apf-operator/internal/apf/metrics"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
)

// metricNames tells whether a metric name is exported, by asking the registries the metrics
// live in: the operator's own collectors registered into a fresh registry (as SetupWithManager
// and the manager register them), controller-runtime's global registry (reconcile, webhook,
// workqueue, client-go and leader election metrics), and kube-apiserver's flowcontrol metrics
// as k8s.io/apiserver defines them (what enforces the projected levels).
type metricNames struct {
	operator *prometheus.Registry
}

// newMetricNames registers every collector the operator and the filter export.
func newMetricNames(t *testing.T) *metricNames {
	t.Helper()
	reg := prometheus.NewRegistry()
	if _, err := defaults.NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := newProjectionMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := newSnapshotDuration(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := newFleetMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := eventratelimit.NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	filtermetrics.NewMetrics(reg) // the in-process filter's, for servers that embed it
	flowcontrolmetrics.Register()
	return &metricNames{operator: reg}
}

// exported reports whether name, or the histogram or summary it is a series of, is exported.
func (n *metricNames) exported(name string) bool {
	if n.registered(name) {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && n.registered(base) {
			return true
		}
	}
	return false
}

func (n *metricNames) registered(name string) bool {
	return takenIn(n.operator, name) || takenIn(ctrlmetrics.Registry, name) || takenInKube(name)
}

// takenIn reports whether reg holds a collector named name: registering a probe of that name
// fails then (same name, whatever its labels), and succeeds otherwise (it is removed again).
func takenIn(reg prometheus.Registerer, name string) bool {
	probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "probe of " + name})
	if err := reg.Register(probe); err != nil {
		return true
	}
	reg.Unregister(probe)
	return false
}

// takenInKube is takenIn for component-base's legacy registry, where kube-apiserver's metrics
// register. It cannot unregister, so it probes only the apiserver_flowcontrol_ names: a probe
// of an unknown name stays registered, and the check fails anyway.
func takenInKube(name string) bool {
	if !strings.HasPrefix(name, "apiserver_flowcontrol_") {
		return false
	}
	probe := k8smetrics.NewGauge(&k8smetrics.GaugeOpts{Name: name, Help: "probe of " + name, StabilityLevel: k8smetrics.ALPHA})
	return legacyregistry.Register(probe) != nil
}

// selectorNames parses a PromQL expression and returns the metric name of every vector
// selector in it; an error for a syntax error or a selector without a literal name.
func selectorNames(expr string) ([]string, error) {
	parsed, err := parser.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	parser.Inspect(parsed, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			if vs.Name == "" {
				err = fmt.Errorf("selector %s names no metric", vs)
			}
			names = append(names, vs.Name)
		}
		return nil
	})
	return names, err
}

// unknownMetrics returns the names expr uses that no registry exports.
func (n *metricNames) unknownMetrics(expr string) ([]string, error) {
	names, err := selectorNames(expr)
	if err != nil {
		return nil, err
	}
	var unknown []string
	for _, name := range names {
		if !n.exported(name) {
			unknown = append(unknown, name)
		}
	}
	return unknown, nil
}

// selectorsWithoutMatcher returns the vector selectors of expr that have no matcher on label.
func selectorsWithoutMatcher(expr, label string) []string {
	parsed, err := parser.ParseExpr(expr)
	if err != nil {
		return []string{err.Error()}
	}
	var missing []string
	parser.Inspect(parsed, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok &&
			!slices.ContainsFunc(vs.LabelMatchers, func(m *labels.Matcher) bool { return m.Name == label }) {
			missing = append(missing, vs.String())
		}
		return nil
	})
	return missing
}
