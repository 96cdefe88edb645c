package native

import (
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// Matches reports whether kube-apiserver would match the request a with the native FlowSchema
// fs: some rule whose subjects include the user and whose resource rules (for a resource
// request) or non-resource rules (otherwise) accept it. It follows kube-apiserver's
// k8s.io/apiserver/pkg/util/flowcontrol/rule.go, which is not importable.
func Matches(fs *flowcontrolv1.FlowSchema, a *request.Attributes) bool {
	for i := range fs.Spec.Rules {
		r := &fs.Spec.Rules[i]
		if !slices.ContainsFunc(r.Subjects, func(s flowcontrolv1.Subject) bool { return subjectMatches(&s, a) }) {
			continue
		}
		if a.ResourceRequest && slices.ContainsFunc(r.ResourceRules, func(rr flowcontrolv1.ResourcePolicyRule) bool {
			return resourceRuleMatches(&rr, a)
		}) {
			return true
		}
		if !a.ResourceRequest && slices.ContainsFunc(r.NonResourceRules, func(nr flowcontrolv1.NonResourcePolicyRule) bool {
			return listed(nr.Verbs, a.Verb, flowcontrolv1.VerbAll) && pathMatches(nr.NonResourceURLs, a.Path)
		}) {
			return true
		}
	}
	return false
}

func subjectMatches(s *flowcontrolv1.Subject, a *request.Attributes) bool {
	switch {
	case s.Kind == flowcontrolv1.SubjectKindUser && s.User != nil:
		return s.User.Name == flowcontrolv1.NameAll || s.User.Name == a.User
	case s.Kind == flowcontrolv1.SubjectKindGroup && s.Group != nil:
		return s.Group.Name == flowcontrolv1.NameAll || slices.Contains(a.Groups, s.Group.Name)
	case s.Kind == flowcontrolv1.SubjectKindServiceAccount && s.ServiceAccount != nil:
		prefix := "system:serviceaccount:" + s.ServiceAccount.Namespace + ":"
		rest, ok := strings.CutPrefix(a.User, prefix)
		if s.ServiceAccount.Name == flowcontrolv1.NameAll {
			return ok
		}
		return ok && rest == s.ServiceAccount.Name
	}
	return false
}

func resourceRuleMatches(r *flowcontrolv1.ResourcePolicyRule, a *request.Attributes) bool {
	joined := a.Resource
	if a.Subresource != "" {
		joined += "/" + a.Subresource
	}
	if !listed(r.Verbs, a.Verb, flowcontrolv1.VerbAll) || !listed(r.Resources, joined, flowcontrolv1.ResourceAll) ||
		!listed(r.APIGroups, a.APIGroup, flowcontrolv1.APIGroupAll) {
		return false
	}
	if a.Namespace == "" {
		return r.ClusterScope
	}
	return listed(r.Namespaces, a.Namespace, flowcontrolv1.NamespaceEvery)
}

// listed is kube-apiserver's containsString: the wildcard counts only as the sole entry.
func listed(list []string, v, wildcard string) bool {
	return (len(list) == 1 && list[0] == wildcard) || slices.Contains(list, v)
}

func pathMatches(urls []string, path string) bool {
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

// Classified reports whether kube-apiserver classifies a at all. It serves long-running
// requests unclassified, except watches: verb proxy, the subresources attach, exec, proxy, log
// (followed or not) and portforward, and non-resource paths under /debug/pprof/ (kube-apiserver's
// BasicLongRunningRequestCheck and its priority-and-fairness filter).
func Classified(a *request.Attributes) bool {
	if a.Verb == request.VerbWatch {
		return true
	}
	switch {
	case a.Verb == request.VerbProxy:
		return false
	case a.ResourceRequest:
		return !slices.Contains([]string{"attach", "exec", "proxy", "log", "portforward"}, a.Subresource)
	}
	return !strings.HasPrefix(a.Path, "/debug/pprof/")
}
