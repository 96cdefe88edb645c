// Package apfmetrics reads what kube-apiserver publishes about its API Priority and Fairness:
// the apiserver_flowcontrol_* families of its Prometheus text metrics (/metrics) and the text
// tables of /debug/api_priority_and_fairness/dump_*. The operator's native seats, its status
// summaries, nativeview (explain) and `apf-operator top` all read through it. It is the one place
// that computes seats from kube-apiserver's metrics: ParseSeats and SeatsOf give each level's
// nominal and current limit and the server's concurrency limit. Parsing is defensive: unknown
// families, labels and columns are ignored, never fatal.
package apfmetrics

import (
	"bufio"
	"bytes"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Prefix is the prefix of every APF metric family of kube-apiserver.
const Prefix = "apiserver_flowcontrol_"

// Families are metric families by name.
type Families map[string]*dto.MetricFamily

// Parse reads the families of raw (Prometheus text format) whose names start with one of
// prefixes (all of raw's families when none is given). Only those lines are handed to the
// parser: kube-apiserver's /metrics is megabytes, its APF part a small fraction.
func Parse(raw []byte, prefixes ...string) (Families, error) {
	var kept bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if wanted(line, prefixes) {
			kept.WriteString(line)
			kept.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(&kept)
	if err != nil {
		return nil, err
	}
	return Families(families), nil
}

// wanted reports whether a line of the text format belongs to a family with one of prefixes.
func wanted(line string, prefixes []string) bool {
	if len(prefixes) == 0 {
		return true
	}
	name := line
	if rest, ok := strings.CutPrefix(line, "# "); ok {
		// "# HELP name ..." or "# TYPE name ...": the name is the third word.
		fields := strings.Fields(rest)
		if len(fields) < 2 {
			return false
		}
		name = fields[1]
	}
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Label is the value of the label name of m, "" when absent.
func Label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Value is the value of a gauge, counter or untyped sample; 0 for other types.
func Value(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

// ByLabel sums the values of family name by the value of label.
func (f Families) ByLabel(name, label string) map[string]float64 {
	out := map[string]float64{}
	fam := f[name]
	if fam == nil {
		return out
	}
	for _, m := range fam.GetMetric() {
		out[Label(m, label)] += Value(m)
	}
	return out
}
