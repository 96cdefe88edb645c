package importer

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// Existing is the native levels a FlowSchema may refer to without the inputs defining them:
// the cluster's (--from-cluster) or those of kube-apiserver's bootstrap set of a Kubernetes
// version.
type Existing struct {
	// Levels are the native levels by name.
	Levels map[string]*flowcontrolv1.PriorityLevelConfiguration
	// Origin says where they come from, for the notes, e.g. "the cluster".
	Origin string
}

// ExistingLevels indexes levels by name.
func ExistingLevels(origin string, levels []flowcontrolv1.PriorityLevelConfiguration) Existing {
	out := Existing{Origin: origin, Levels: map[string]*flowcontrolv1.PriorityLevelConfiguration{}}
	for i := range levels {
		out.Levels[levels[i].Name] = &levels[i]
	}
	return out
}

// boundSpec is the RequestPriority bound (spec.nativeLevel) to an existing native level: no
// level is defined, FlowSchemas referring to it project onto that level. The shares and
// queuing fields repeat the native level's, for the in-process filter only; a level that
// rejects (catch-all) gets the smallest queuing there is, one queue of one request.
func boundSpec(plc *flowcontrolv1.PriorityLevelConfiguration) *flowv1.RequestPrioritySpec {
	spec := &flowv1.RequestPrioritySpec{PriorityLevel: levelStep, NativeLevel: plc.Name,
		AssuredConcurrencyShares: ptr.To[int32](defaultShares), LendablePercent: ptr.To[int32](0),
		QueuesPerWidth: ptr.To[int32](1), QueueLengthLimit: ptr.To[int32](1)}
	l := plc.Spec.Limited
	if plc.Spec.Type != flowcontrolv1.PriorityLevelEnablementLimited || l == nil {
		return spec
	}
	spec.AssuredConcurrencyShares = int32Or(l.NominalConcurrencyShares, defaultShares)
	spec.LendablePercent = int32Or(l.LendablePercent, 0)
	spec.BorrowingLimitPercent = copyInt32(l.BorrowingLimitPercent)
	if l.LimitResponse.Type == flowcontrolv1.LimitResponseTypeQueue && l.LimitResponse.Queuing != nil {
		q := queuing(*l.LimitResponse.Queuing)
		spec.QueuesPerWidth, spec.QueueLengthLimit = &q.Queues, &q.QueueLengthLimit
		if q.Queues > 1 {
			spec.HandSize = &q.HandSize
		}
	}
	return spec
}

// bind makes name a RequestPriority bound to the native level plc, found in where.
func (im *importer) bind(plc *flowcontrolv1.PriorityLevelConfiguration, where string) {
	if im.specs[plc.Name] != nil {
		return
	}
	im.specs[plc.Name] = boundSpec(plc)
	im.bound[plc.Name] = where
}

// bindReferences binds every level an imported FlowSchema refers to that the inputs do not
// define to the existing level of that name; a level that does not exist there either is
// unknown: its FlowSchemas are imported but will not be enforced.
func (im *importer) bindReferences(schemas []*flowcontrolv1.FlowSchema) {
	for _, fs := range schemas {
		ref := fs.Spec.PriorityLevelConfiguration.Name
		switch {
		case ref == ExemptName || im.specs[ref] != nil || im.plcs[ref] != nil:
		case im.opts.Existing.Levels[ref] != nil:
			im.bind(im.opts.Existing.Levels[ref], im.opts.Existing.Origin)
		default:
			im.unknown[ref] = true
		}
	}
}

// bindsInstead tells whether a level of the inputs is bound rather than defined:
// kube-apiserver's own levels (mandatory or suggested), which every cluster has.
func bindsInstead(o origin) bool { return o == originSuggested || o == originMandatory }
