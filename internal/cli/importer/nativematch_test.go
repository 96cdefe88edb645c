package importer

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/native"
)

// nativePick returns the FlowSchema kube-apiserver picks for a: the first match in
// (matchingPrecedence, name) order among the schemas whose level exists (apf_controller.go
// skips dangling ones); nil when none does. The matching is internal/native's copy of
// kube-apiserver's rule.go, which the importer itself does not use.
func nativePick(plcs []flowcontrolv1.PriorityLevelConfiguration, fss []flowcontrolv1.FlowSchema, a *request.Attributes) *flowcontrolv1.FlowSchema {
	levels := map[string]bool{}
	for _, plc := range plcs {
		levels[plc.Name] = true
	}
	var live []flowcontrolv1.FlowSchema
	for i := range fss {
		if levels[fss[i].Spec.PriorityLevelConfiguration.Name] {
			live = append(live, fss[i])
		}
	}
	return native.Classify(live, a)
}

// nativeMatches is rule.go's matchesFlowSchema.
func nativeMatches(fs *flowcontrolv1.FlowSchema, a *request.Attributes) bool {
	return native.Matches(fs, a)
}
