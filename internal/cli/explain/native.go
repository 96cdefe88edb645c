package explain

import (
	"fmt"
	"strings"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/native"
)

// NativeInfo is how kube-apiserver classifies the request when the configuration is projected
// onto its own flow control (enforcement native) and its own schemas are as it bootstraps them.
type NativeInfo struct {
	// Classified is false for the long-running requests kube-apiserver serves unclassified.
	Classified bool `json:"classified"`
	// FlowSchema and PriorityLevel are the native objects kube-apiserver picks.
	FlowSchema    string `json:"flowSchema,omitempty"`
	PriorityLevel string `json:"priorityLevel,omitempty"`
	// Source is the object the native FlowSchema was projected from ("FlowSchema/x"); empty
	// for kube-apiserver's own schemas, which take some requests ahead of the projection and,
	// with --native-unmatched=kube-apiserver, those no projected FlowSchema matches after it.
	Source string `json:"source,omitempty"`
	// Precedence is the native FlowSchema's matchingPrecedence.
	Precedence int32 `json:"precedence,omitempty"`
	// Projected tells whether the FlowSchema our classifier picks is projected; Reason and
	// Message say why not.
	Projected bool   `json:"projected"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
}

// reasonUnmatched is NativeInfo.Reason for a request only the catch-all backstop matches while
// the backstop is not projected (--native-unmatched=kube-apiserver).
const reasonUnmatched = "Unmatched"

// explainNative classifies a the way kube-apiserver would: its own mandatory and suggested
// schemas and levels, plus the projection of cfg (made with the given --native-unmatched
// choice) and the operator's route (nil: none).
func explainNative(cfg *effective.Config, schema *effective.Schema, a *request.Attributes, operator *native.ServiceAccount,
	unmatched native.Unmatched) *NativeInfo {
	plan := native.Project(cfg, native.Existing{PriorityLevels: bootstrapLevels(), Operator: operator, Unmatched: unmatched})
	out := &NativeInfo{Classified: native.Classified(a)}
	switch res, ok := plan.FlowSchemaResults[schema.Name]; {
	case schema == cfg.CatchAll && unmatched != native.UnmatchedOperator:
		out.Reason = reasonUnmatched
		out.Message = "no FlowSchema matches the request, and with --native-unmatched=kube-apiserver the backstop " +
			schema.Name + " is not projected: kube-apiserver's own schema classifies it, as without the operator"
	case schema == cfg.CatchAll || schema == cfg.MastersBackstop:
		out.Projected = true // a backstop: projected, or mirrored by kube-apiserver's exempt
	case ok && !schema.Backstop:
		out.Projected, out.Reason, out.Message = res.Projected, res.Reason, res.Message
	}
	if !out.Classified {
		return out
	}
	if fs := native.Classify(append(native.BootstrapSchemas(), plan.FlowSchemas...), a); fs != nil {
		out.FlowSchema, out.PriorityLevel = fs.Name, fs.Spec.PriorityLevelConfiguration.Name
		out.Precedence = fs.Spec.MatchingPrecedence
		if native.Owned(fs) {
			out.Source = fs.Annotations[flowv1.AnnotationSource]
		}
	}
	return out
}

// describe is the explanation's kube-apiserver line.
func (n *NativeInfo) describe() string {
	if !n.Classified {
		return "serves it unclassified (long-running)"
	}
	s := fmt.Sprintf("FlowSchema %s, level %s", n.FlowSchema, n.PriorityLevel)
	switch {
	case strings.HasPrefix(n.Source, native.KindOperator+"/"):
		s += " (the operator's own route for its service account " + strings.TrimPrefix(n.Source, native.KindOperator+"/") +
			", ahead of every projected schema)"
	case n.Source != "":
		s += " (projected from " + n.Source + ")"
	case n.Precedence < native.MinPrecedence:
		s += " (kube-apiserver's own schema, ahead of the projection)"
	default:
		s += " (kube-apiserver's own schema, after the projection: no projected FlowSchema matches)"
	}
	switch {
	case n.Reason == reasonUnmatched:
		s += "; " + n.Message
	case !n.Projected:
		s += fmt.Sprintf("; the FlowSchema above is not projected (%s): %s", n.Reason, n.Message)
	}
	return s
}
