package controllers

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/controllers/internal/reconcileutil"
	"github.com/apf-operator/apf-operator/internal/native"
)

// maxNotProjectedSeries bounds the per-object series of objects that are not projected, so a
// configuration of 10,000 FlowSchemas that all fail costs 100 series, not 10,000: the counts
// of apf_operator_projection_objects stay exact, and the first objects by kind and name are
// enough to start from (their status says the rest).
const maxNotProjectedSeries = 100

// fleetMetrics are the metrics that let one dashboard compare the configuration of many
// clusters. They are set from each snapshot of the effective configuration (once per burst of
// changes), never by listing the cache per scrape. The snapshot holder runs on the leader
// only, so only the leader exports them: a fleet query counts each cluster once.
type fleetMetrics struct {
	configInfo   seriesSet
	objects      seriesSet
	notProjected seriesSet
}

// seriesSet is a gauge vector whose series are replaced as a whole by each snapshot: the new
// values are set before the series that are gone are deleted, so a scrape never sees the
// vector empty (which would reset the for duration of an alert on it).
type seriesSet struct {
	*prometheus.GaugeVec
	current map[string][]string // the label values of each series set last, by joined key
}

// replace sets every series of values (label values joined by "\x00" as keys, see key) and
// deletes the series the previous call set that values lacks.
func (s *seriesSet) replace(values map[string]float64) {
	next := make(map[string][]string, len(values))
	for k, v := range values {
		lvs := strings.Split(k, "\x00")
		s.WithLabelValues(lvs...).Set(v)
		next[k] = lvs
	}
	for k, lvs := range s.current {
		if _, kept := next[k]; !kept {
			s.DeleteLabelValues(lvs...)
		}
	}
	s.current = next
}

// key joins label values into a seriesSet key.
func key(labelValues ...string) string { return strings.Join(labelValues, "\x00") }

// newFleetMetrics creates the fleet metrics and registers them into reg.
func newFleetMetrics(reg prometheus.Registerer) (*fleetMetrics, error) {
	m := &fleetMetrics{
		configInfo: seriesSet{GaugeVec: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apf_operator_config_info",
			Help: "Always 1; digest is a sha256 of the effective configuration's specs (levels and schemas in effect, canonical order), equal on clusters with equal configurations.",
		}, []string{"digest"})},
		objects: seriesSet{GaugeVec: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apf_operator_objects",
			Help: "RequestPriority and FlowSchema objects by kind and Ready condition (ready true or false, reason Accepted or why the object is ignored).",
		}, []string{"kind", "ready", "reason"})},
		notProjected: seriesSet{GaugeVec: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apf_operator_projection_failed_object",
			Help: "Always 1, for each object in effect that is not projected onto kube-apiserver's native objects, with the reason (at most 100 series, the first by kind and name).",
		}, []string{"kind", "name", "reason"})},
	}
	if err := reconcileutil.RegisterAll(reg, m.configInfo.GaugeVec, m.objects.GaugeVec, m.notProjected.GaugeVec); err != nil {
		return nil, err
	}
	return m, nil
}

// record sets every fleet metric from the current snapshot; a snapshot subscriber.
func (m *fleetMetrics) record(_, cur *snapshot) {
	m.configInfo.replace(map[string]float64{key(cur.cfg.Digest()): 1})
	m.recordObjects(cur)
	m.recordNotProjected(cur.plan)
}

func (m *fleetMetrics) recordObjects(s *snapshot) {
	counts := map[string]float64{}
	for kind, views := range map[string]map[string]objectView{
		native.KindRequestPriority: s.rps, native.KindFlowSchema: s.fss,
	} {
		// The Ready series exists at 0 too, so that a ratio or a dashboard row has a value.
		counts[key(kind, "true", flowv1.ReasonAccepted)] += 0
		for _, v := range views {
			counts[key(kind, strconv.FormatBool(v.status.InEffect), v.status.Reason)]++
		}
	}
	m.objects.replace(counts)
}

// notProjectedObject is an object in effect whose projection failed.
type notProjectedObject struct{ kind, name, reason string }

// recordNotProjected exports the first maxNotProjectedSeries objects that are in effect but
// not projected; objects not in effect are counted by apf_operator_objects already.
func (m *fleetMetrics) recordNotProjected(plan *native.Plan) {
	series := map[string]float64{}
	defer func() { m.notProjected.replace(series) }()
	if plan == nil {
		return // enforcement none: nothing is projected, nothing fails
	}
	var failed []notProjectedObject
	for kind, results := range map[string]map[string]native.Result{
		native.KindRequestPriority: plan.RequestPriorities, native.KindFlowSchema: plan.FlowSchemaResults,
	} {
		for name, r := range results {
			if !r.Projected && r.Reason != flowv1.ReasonNotInEffect {
				failed = append(failed, notProjectedObject{kind, name, r.Reason})
			}
		}
	}
	slices.SortFunc(failed, func(a, b notProjectedObject) int {
		return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.name, b.name))
	})
	for _, o := range failed[:min(len(failed), maxNotProjectedSeries)] {
		series[key(o.kind, o.name, o.reason)] = 1
	}
}
