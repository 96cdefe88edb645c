package controllers

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
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
	configInfo   *prometheus.GaugeVec
	objects      *prometheus.GaugeVec
	notProjected *prometheus.GaugeVec
}

// newFleetMetrics creates the fleet metrics and registers them into reg.
func newFleetMetrics(reg prometheus.Registerer) (*fleetMetrics, error) {
	m := &fleetMetrics{
		configInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apf_operator_config_info",
			Help: "Always 1; digest is a sha256 of the effective configuration's specs (levels and schemas in effect, canonical order), equal on clusters with equal configurations.",
		}, []string{"digest"}),
		objects: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apf_operator_objects",
			Help: "RequestPriority and FlowSchema objects by kind and Ready condition (ready true or false, reason Accepted or why the object is ignored).",
		}, []string{"kind", "ready", "reason"}),
		notProjected: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apf_operator_projection_failed_object",
			Help: "Always 1, for each object in effect that is not projected onto kube-apiserver's native objects, with the reason (at most 100 series, the first by kind and name).",
		}, []string{"kind", "name", "reason"}),
	}
	if err := registerAll(reg, m.configInfo, m.objects, m.notProjected); err != nil {
		return nil, err
	}
	return m, nil
}

// record sets every fleet metric from the current snapshot; a snapshot subscriber.
func (m *fleetMetrics) record(_, cur *snapshot) {
	m.configInfo.Reset()
	m.configInfo.WithLabelValues(cur.cfg.Digest()).Set(1)
	m.recordObjects(cur)
	m.recordNotProjected(cur.plan)
}

func (m *fleetMetrics) recordObjects(s *snapshot) {
	m.objects.Reset()
	for kind, views := range map[string]map[string]objectView{
		native.KindRequestPriority: s.rps, native.KindFlowSchema: s.fss,
	} {
		// The Ready series exists at 0 too, so that a ratio or a dashboard row has a value.
		m.objects.WithLabelValues(kind, "true", flowv1.ReasonAccepted)
		for _, v := range views {
			m.objects.WithLabelValues(kind, strconv.FormatBool(v.status.InEffect), v.status.Reason).Inc()
		}
	}
}

// notProjectedObject is an object in effect whose projection failed.
type notProjectedObject struct{ kind, name, reason string }

// recordNotProjected exports the first maxNotProjectedSeries objects that are in effect but
// not projected; objects not in effect are counted by apf_operator_objects already.
func (m *fleetMetrics) recordNotProjected(plan *native.Plan) {
	m.notProjected.Reset()
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
		m.notProjected.WithLabelValues(o.kind, o.name, o.reason).Set(1)
	}
}
