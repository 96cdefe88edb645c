package importer

import (
	"cmp"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// This file is a faithful copy of kube-apiserver's classification (k8s.io/apiserver
// pkg/util/flowcontrol/rule.go, and the order of apf_controller.go), on request.Attributes.

// nativePick returns the FlowSchema kube-apiserver picks for a: the first match in
// (matchingPrecedence, name) order among the schemas whose level exists; nil when none does.
func nativePick(plcs []flowcontrolv1.PriorityLevelConfiguration, fss []flowcontrolv1.FlowSchema, a *request.Attributes) *flowcontrolv1.FlowSchema {
	levels := map[string]bool{}
	for _, plc := range plcs {
		levels[plc.Name] = true
	}
	ordered := make([]*flowcontrolv1.FlowSchema, 0, len(fss))
	for i := range fss {
		if levels[fss[i].Spec.PriorityLevelConfiguration.Name] { // dangling schemas are skipped
			ordered = append(ordered, &fss[i])
		}
	}
	slices.SortFunc(ordered, func(x, y *flowcontrolv1.FlowSchema) int {
		return cmp.Or(cmp.Compare(x.Spec.MatchingPrecedence, y.Spec.MatchingPrecedence), strings.Compare(x.Name, y.Name))
	})
	for _, fs := range ordered {
		if nativeMatches(fs, a) {
			return fs
		}
	}
	return nil
}

// nativeMatches is rule.go's matchesFlowSchema.
func nativeMatches(fs *flowcontrolv1.FlowSchema, a *request.Attributes) bool {
	for i := range fs.Spec.Rules {
		if matchesPolicyRule(a, &fs.Spec.Rules[i]) {
			return true
		}
	}
	return false
}

func matchesPolicyRule(a *request.Attributes, rule *flowcontrolv1.PolicyRulesWithSubjects) bool {
	if !slices.ContainsFunc(rule.Subjects, func(s flowcontrolv1.Subject) bool { return matchesSubject(a, s) }) {
		return false
	}
	if a.ResourceRequest {
		return slices.ContainsFunc(rule.ResourceRules, func(r flowcontrolv1.ResourcePolicyRule) bool {
			return matchesResourceRule(a, r)
		})
	}
	return slices.ContainsFunc(rule.NonResourceRules, func(r flowcontrolv1.NonResourcePolicyRule) bool {
		return containsString(a.Verb, r.Verbs, flowcontrolv1.VerbAll) && matchNonResourceURL(r.NonResourceURLs, a.Path)
	})
}

func matchesSubject(a *request.Attributes, s flowcontrolv1.Subject) bool {
	switch s.Kind {
	case flowcontrolv1.SubjectKindUser:
		return s.User != nil && (s.User.Name == flowcontrolv1.NameAll || s.User.Name == a.User)
	case flowcontrolv1.SubjectKindGroup:
		return s.Group != nil && (s.Group.Name == "*" || slices.Contains(a.Groups, s.Group.Name))
	case flowcontrolv1.SubjectKindServiceAccount:
		if s.ServiceAccount == nil {
			return false
		}
		rest, ok := strings.CutPrefix(a.User, "system:serviceaccount:")
		if !ok {
			return false
		}
		if rest, ok = strings.CutPrefix(rest, s.ServiceAccount.Namespace); !ok {
			return false
		}
		if rest, ok = strings.CutPrefix(rest, ":"); !ok {
			return false
		}
		return s.ServiceAccount.Name == flowcontrolv1.NameAll || rest == s.ServiceAccount.Name
	}
	return false
}

func matchesResourceRule(a *request.Attributes, r flowcontrolv1.ResourcePolicyRule) bool {
	joined := a.Resource
	if a.Subresource != "" {
		joined += "/" + a.Subresource
	}
	switch {
	case !containsString(a.Verb, r.Verbs, flowcontrolv1.VerbAll),
		!containsString(joined, r.Resources, flowcontrolv1.ResourceAll),
		!containsString(a.APIGroup, r.APIGroups, flowcontrolv1.APIGroupAll):
		return false
	case a.Namespace == "":
		return r.ClusterScope
	}
	return containsString(a.Namespace, r.Namespaces, flowcontrolv1.NamespaceEvery)
}

func matchNonResourceURL(urls []string, path string) bool {
	for _, u := range urls {
		if u == flowcontrolv1.NonResourceAll || u == path {
			return true
		}
		prefix := strings.TrimSuffix(u, "*")
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

func containsString(x string, list []string, wildcard string) bool {
	if len(list) == 1 && list[0] == wildcard {
		return true
	}
	return slices.Contains(list, x)
}
