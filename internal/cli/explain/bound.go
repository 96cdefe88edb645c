package explain

import (
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// addLevel names, in out, the RequestPriority of the operator's FlowSchema that matches a, the
// native level it is bound to (spec.nativeLevel), and the spec fields of that level which
// kube-apiserver reads differently from the in-process engine (native.Differences, against the
// view's level of that name).
func addLevel(out *Ours, cfg *effective.Config, a *request.Attributes, view *nativeview.View) {
	if out == nil || out.FlowSchema == "" {
		return
	}
	var res classify.Result
	classify.Compile(cfg).Classify(a, &res)
	p := res.Schema.Priority
	if p == nil || res.Schema.Name != out.FlowSchema || res.Schema.Backstop {
		return
	}
	out.RequestPriority, out.BoundTo = p.Name, p.NativeLevel
	levels := view.PriorityLevels()
	target := -1
	for i := range levels {
		if levels[i].Name == p.NativeLevel {
			target = i
		}
	}
	diffs := native.Differences(p, nil)
	if target >= 0 {
		diffs = native.Differences(p, &levels[target])
	}
	for _, d := range diffs {
		out.Differences = append(out.Differences, d.String())
	}
}
