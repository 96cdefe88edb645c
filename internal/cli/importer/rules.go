package importer

import (
	"regexp"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// anyValue is the pattern of every value of a present attribute (see the package doc for
// values with a newline).
const anyValue = ".*"

// tests is the atomic tests of one conjunction, or of a part of one.
type tests []flowv1.AtomicTest

// ruleConjunctions returns the conjunctions of one native rule: every subject term combined
// with every resource part (res) and every non-resource part (nonRes). A rule no request can
// match gives none.
func ruleConjunctions(rule *flowcontrolv1.PolicyRulesWithSubjects) (res, nonRes []flowv1.Conjunction) {
	subjects := subjectTerms(rule.Subjects)
	var resParts, nonResParts []tests
	for i := range rule.ResourceRules {
		resParts = append(resParts, resourceParts(&rule.ResourceRules[i])...)
	}
	for i := range rule.NonResourceRules {
		nonResParts = append(nonResParts, nonResourceParts(&rule.NonResourceRules[i])...)
	}
	return combine(subjects, resParts), combine(subjects, nonResParts)
}

// combine makes one conjunction of each subject term and each part.
func combine(subjects, parts []tests) []flowv1.Conjunction {
	var out []flowv1.Conjunction
	for _, s := range subjects {
		for _, p := range parts {
			and := make([]flowv1.AtomicTest, 0, len(s)+len(p))
			out = append(out, flowv1.Conjunction{And: append(append(and, s...), p...)})
		}
	}
	return out
}

// subjectTerms returns the subjects as an OR of terms: all named users (service accounts
// included) in one inSet, one superSet per group, one pattern per namespace of service
// accounts; a single empty term when some subject accepts everyone; none when no subject
// accepts anyone.
func subjectTerms(subjects []flowcontrolv1.Subject) []tests {
	var users, groups, saNamespaces []string
	for _, s := range subjects {
		switch {
		case s.Kind == flowcontrolv1.SubjectKindUser && s.User != nil:
			users = append(users, s.User.Name)
		case s.Kind == flowcontrolv1.SubjectKindGroup && s.Group != nil:
			groups = append(groups, s.Group.Name)
		case s.Kind == flowcontrolv1.SubjectKindServiceAccount && s.ServiceAccount != nil && s.ServiceAccount.Name == flowcontrolv1.NameAll:
			saNamespaces = append(saNamespaces, s.ServiceAccount.Namespace)
		case s.Kind == flowcontrolv1.SubjectKindServiceAccount && s.ServiceAccount != nil:
			users = append(users, serviceaccount.MakeUsername(s.ServiceAccount.Namespace, s.ServiceAccount.Name))
		}
	}
	if slices.Contains(users, flowcontrolv1.NameAll) || slices.Contains(groups, flowcontrolv1.NameAll) {
		return []tests{nil}
	}
	var terms []tests
	if users = dedupe(users); len(users) > 0 {
		terms = append(terms, tests{inSet(flowv1.FieldUser, users)})
	}
	for _, g := range dedupe(groups) {
		terms = append(terms, tests{superSet(g)})
	}
	for _, ns := range dedupe(saNamespaces) {
		// kube-apiserver's serviceAccountMatchesNamespace: the user name starts with
		// "system:serviceaccount:<namespace>:", whatever follows.
		prefix := serviceaccount.MakeUsername(ns, "")
		terms = append(terms, tests{pattern(flowv1.FieldUser, regexp.QuoteMeta(prefix)+anyValue)})
	}
	return terms
}

// resourceParts returns the parts of one resource rule: one per group of resources that
// share their set of subresources. Each has a positive test on resource.
func resourceParts(rule *flowcontrolv1.ResourcePolicyRule) []tests {
	verbs, ok := listTest(flowv1.FieldVerb, rule.Verbs, flowcontrolv1.VerbAll)
	if !ok {
		return nil
	}
	groups, ok := listTest(flowv1.FieldAPIGroup, rule.APIGroups, flowcontrolv1.APIGroupAll)
	if !ok {
		return nil
	}
	namespaces, ok := namespaceTests(rule.Namespaces, rule.ClusterScope)
	if !ok {
		return nil
	}
	var out []tests
	for _, res := range resourceTests(rule.Resources) {
		part := slices.Concat(verbs, groups, res, namespaces)
		out = append(out, part)
	}
	return out
}

// resourceTests returns, per group of resources with the same subresources, the tests on
// resource and subresource whose cross product is exactly the listed "res[/sub]" entries.
func resourceTests(entries []string) []tests {
	if isWildcard(entries, flowcontrolv1.ResourceAll) {
		return []tests{{pattern(flowv1.FieldResource, anyValue)}}
	}
	subsOf := map[string][]string{}
	var order []string
	for _, e := range entries {
		res, sub, slash := strings.Cut(e, "/")
		if slash && sub == "" {
			continue // "pods/" names no request: a request's resource has no "/"
		}
		if _, seen := subsOf[res]; !seen {
			order = append(order, res)
		}
		subsOf[res] = dedupe(append(subsOf[res], sub))
	}
	var out []tests
	grouped := map[string]int{} // subresource set -> index in out
	var resources [][]string
	for _, res := range order {
		subs := slices.Sorted(slices.Values(subsOf[res]))
		key := strings.Join(subs, "\x00")
		if i, ok := grouped[key]; ok {
			resources[i] = append(resources[i], res)
			continue
		}
		grouped[key] = len(out)
		resources = append(resources, []string{res})
		out = append(out, tests{inSet(flowv1.FieldSubresource, subs)})
	}
	for i := range out {
		out[i] = tests{inSet(flowv1.FieldResource, resources[i]), out[i][0]}
	}
	return out
}

// namespaceTests returns the namespace tests of a resource rule, and false when it accepts
// no namespace and no cluster-scoped request. A cluster-scoped request has namespace "".
func namespaceTests(namespaces []string, clusterScope bool) (tests, bool) {
	if isWildcard(namespaces, flowcontrolv1.NamespaceEvery) {
		if clusterScope {
			return nil, true
		}
		return tests{{NotEquals: &flowv1.ValueTest{Field: flowv1.FieldNamespace, Value: ""}}}, true
	}
	values := slices.DeleteFunc(slices.Clone(namespaces), func(ns string) bool { return ns == "" })
	if clusterScope {
		values = append(values, "")
	}
	if values = dedupe(values); len(values) == 0 {
		return nil, false
	}
	return tests{inSet(flowv1.FieldNamespace, values)}, true
}

// nonResourceParts returns the parts of one non-resource rule: one per URL.
func nonResourceParts(rule *flowcontrolv1.NonResourcePolicyRule) []tests {
	verbs, ok := listTest(flowv1.FieldVerb, rule.Verbs, flowcontrolv1.VerbAll)
	if !ok {
		return nil
	}
	var out []tests
	for _, u := range dedupe(slices.Clone(rule.NonResourceURLs)) {
		out = append(out, slices.Concat(verbs, tests{pattern(flowv1.FieldPath, pathPattern(u))}))
	}
	return out
}

// pathPattern is the pattern of the paths a native non-resource URL accepts: "*" every path;
// otherwise the URL itself and every path under its prefix (the URL without a trailing "*",
// ending in "/"), as kube-apiserver's matchPolicyRuleNonResourceURL decides.
func pathPattern(url string) string {
	if url == flowcontrolv1.NonResourceAll {
		return anyValue
	}
	prefix := strings.TrimSuffix(url, "*")
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	switch {
	case strings.HasPrefix(url, prefix): // "/x/*", "/x/", "/"
		return regexp.QuoteMeta(prefix) + anyValue
	case url+"/" == prefix: // "/x"
		return regexp.QuoteMeta(url) + "(/" + anyValue + ")?"
	}
	return "(?:" + regexp.QuoteMeta(url) + "|" + regexp.QuoteMeta(prefix) + anyValue + ")" // "/x*"
}

// listTest is the test of a native list with a wildcard: none for the wildcard alone, else
// inSet of the listed values; false when the list is empty (it accepts nothing).
func listTest(f flowv1.RequestField, list []string, wildcard string) (tests, bool) {
	switch {
	case len(list) == 0:
		return nil, false
	case isWildcard(list, wildcard):
		return nil, true
	}
	return tests{inSet(f, dedupe(slices.Clone(list)))}, true
}

// isWildcard is kube-apiserver's containsString rule: a wildcard counts only as the sole entry.
func isWildcard(list []string, wildcard string) bool { return len(list) == 1 && list[0] == wildcard }

// inSet is equals for one value, inSet for several.
func inSet(f flowv1.RequestField, values []string) flowv1.AtomicTest {
	if len(values) == 1 {
		return flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: f, Value: values[0]}}
	}
	return flowv1.AtomicTest{InSet: &flowv1.SetTest{Field: f, Set: values}}
}

func superSet(group string) flowv1.AtomicTest {
	return flowv1.AtomicTest{SuperSet: &flowv1.SetTest{Field: flowv1.FieldGroups, Set: []string{group}}}
}

func pattern(f flowv1.RequestField, p string) flowv1.AtomicTest {
	return flowv1.AtomicTest{PatternMatch: &flowv1.PatternTest{Field: f, Pattern: p}}
}

// dedupe removes repeated values, keeping the first of each.
func dedupe(values []string) []string {
	seen := make(map[string]bool, len(values))
	return slices.DeleteFunc(values, func(v string) bool {
		dup := seen[v]
		seen[v] = true
		return dup
	})
}
