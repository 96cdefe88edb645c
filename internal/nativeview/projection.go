package nativeview

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native"
)

// WithProjection returns the view with the operator-owned objects replaced by the projection
// of cfg (manifests, or a proposed change), and the projection's plan, whose Results say why
// an object is not projected. opts carries the operator's settings (Operator, Unmatched,
// MaxSeatLossPercent); its object lists and server limit are the view's own. A projected object
// that already exists under the same name keeps its UID; new ones have none.
func (v *View) WithProjection(cfg *effective.Config, opts native.Existing) (*View, *native.Plan) {
	levels := v.PriorityLevels()
	opts.PriorityLevels, opts.FlowSchemas = levels, v.all
	opts.ServerConcurrencyLimit = v.serverSeats
	plan := native.Project(cfg, opts)

	uids := map[string]flowcontrolv1.FlowSchema{}
	var schemas []flowcontrolv1.FlowSchema
	for _, fs := range v.all {
		if native.Owned(&fs) {
			uids[fs.Name] = fs
			continue
		}
		schemas = append(schemas, fs)
	}
	for _, fs := range plan.FlowSchemas {
		fs.UID = uids[fs.Name].UID
		schemas = append(schemas, fs)
	}
	levelUIDs := map[string]flowcontrolv1.PriorityLevelConfiguration{}
	var kept []flowcontrolv1.PriorityLevelConfiguration
	for _, l := range levels {
		if native.Owned(&l) {
			levelUIDs[l.Name] = l
			continue
		}
		kept = append(kept, l)
	}
	for _, l := range plan.PriorityLevels {
		l.UID = levelUIDs[l.Name].UID
		kept = append(kept, l)
	}
	out := New(v.Origin+", with the operator's objects projected from the given configuration", schemas, kept, v.serverSeats)
	out.SeatsError = v.SeatsError
	return out, plan
}
