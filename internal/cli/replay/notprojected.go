package replay

import (
	"cmp"
	"slices"
	"strings"

	"github.com/apf-operator/apf-operator/internal/native"
)

// Configuration names for NotProjected: the manifests of --current-dir and of -f.
const (
	ConfigurationCurrent  = "current"
	ConfigurationProposed = "proposed"
)

// NotProjected is an object of a configuration's manifests that the operator would not
// project onto kube-apiserver (native.Result): kube-apiserver would not hold it, so the replay
// classifies the requests without it, as the cluster would.
type NotProjected struct {
	// Configuration is ConfigurationCurrent (--current-dir) or ConfigurationProposed (-f).
	Configuration string `json:"configuration"`
	// Kind is RequestPriority or FlowSchema.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Reason is the Projected condition's reason the operator would set (NotExpressible,
	// NotInEffect, OverBudget, ...); Message says why and what to change.
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// notProjected lists the plan's objects that are not projected, RequestPriorities first, by
// name.
func notProjected(plan *native.Plan) []NotProjected {
	var out []NotProjected
	for _, set := range []struct {
		kind    string
		results map[string]native.Result
	}{{"RequestPriority", plan.RequestPriorities}, {"FlowSchema", plan.FlowSchemaResults}} {
		start := len(out)
		for name, r := range set.results {
			if !r.Projected {
				out = append(out, NotProjected{Kind: set.kind, Name: name, Reason: r.Reason, Message: message(r)})
			}
		}
		slices.SortFunc(out[start:], func(a, b NotProjected) int { return cmp.Compare(a.Name, b.Name) })
	}
	return out
}

// projectorPrefix starts the projector's messages; the report already says "not projected".
const projectorPrefix = "not projected, so kube-apiserver does not enforce it: "

// message is the Result's message without projectorPrefix, or its field errors when it has
// none.
func message(r native.Result) string {
	if r.Message != "" || len(r.Errors) == 0 {
		return strings.TrimPrefix(r.Message, projectorPrefix)
	}
	msgs := make([]string, len(r.Errors))
	for i, e := range r.Errors {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// inConfiguration sets every entry's Configuration.
func inConfiguration(configuration string, list []NotProjected) []NotProjected {
	for i := range list {
		list[i].Configuration = configuration
	}
	return list
}
