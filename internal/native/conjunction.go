package native

import (
	"fmt"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// nativeVerbs are the verbs a native rule may list (kube-apiserver's validation); "*" is every
// verb.
var nativeVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "proxy"}

// resourceVerbs are the verbs a resource request can have: a negation on verb is applied to
// them in the resource part. kube-apiserver gives a resource request the verb "" when its
// method is none of GET, HEAD, POST, PUT, PATCH and DELETE (OPTIONS, TRACE, custom methods);
// only the native "*" accepts it, a verb list never does.
var resourceVerbs = append(slices.Clone(nativeVerbs), "")

// resourceOnly are the fields absent from non-resource requests.
var resourceOnly = []flowv1.RequestField{flowv1.FieldAPIGroup, flowv1.FieldResource, flowv1.FieldSubresource,
	flowv1.FieldNamespace, flowv1.FieldName}

// conjunction is one conjunction's tests grouped by field.
type conjunction struct {
	byField map[flowv1.RequestField][]*test
	path    *field.Path
	bounds  *bounds // of the FlowSchema
}

func newConjunction(c *flowv1.Conjunction, path *field.Path, b *bounds) *conjunction {
	out := &conjunction{byField: map[flowv1.RequestField][]*test{}, path: path, bounds: b}
	for j := range c.And {
		t := newTest(&c.And[j], path.Child("and").Index(j), b)
		out.byField[t.field] = append(out.byField[t.field], &t)
	}
	return out
}

// hasPositive reports whether a positive test examines f: it fails wherever f is absent.
func (c *conjunction) hasPositive(fields ...flowv1.RequestField) bool {
	for _, f := range fields {
		for _, t := range c.byField[f] {
			if !t.negate {
				return true
			}
		}
	}
	return false
}

// compileConjunction returns the native rule that accepts exactly the requests c accepts, nil
// when c accepts none, or the reason it cannot be expressed; b is the budget of its FlowSchema.
func compileConjunction(c *flowv1.Conjunction, path *field.Path, b *bounds) (*flowcontrolv1.PolicyRulesWithSubjects, *field.Error) {
	conj := newConjunction(c, path, b)
	res, resNone, resErr := conj.resourceRule()
	non, nonNone, nonErr := conj.nonResourceRule()
	if resNone && nonNone {
		return nil, nil
	}
	subjects, none, err := conj.subjects()
	switch {
	case err != nil:
		return nil, err
	case none:
		return nil, nil
	case resErr != nil && !resNone:
		return nil, resErr
	case nonErr != nil && !nonNone:
		return nil, nonErr
	}
	out := &flowcontrolv1.PolicyRulesWithSubjects{Subjects: subjects}
	if !resNone {
		out.ResourceRules = []flowcontrolv1.ResourcePolicyRule{*res}
	}
	if !nonNone {
		out.NonResourceRules = []flowcontrolv1.NonResourcePolicyRule{*non}
	}
	if err := conj.charge(out); err != nil {
		return nil, err
	}
	return out, nil
}

// subjects compiles the user and groups tests; none is true when no user can match.
func (c *conjunction) subjects() ([]flowcontrolv1.Subject, bool, *field.Error) {
	if sa, ok := c.saWildcardSubjects(); ok {
		return sa, false, nil
	}
	users, err := constrain(c.byField[flowv1.FieldUser], nil)
	if err != nil {
		return nil, false, err
	}
	var groups []string
	for _, t := range c.byField[flowv1.FieldGroups] {
		if t.negate {
			return nil, false, field.Invalid(t.path, t.operand(), "not expressible natively: notSuperSet accepts "+
				"users lacking a group, an unbounded set native subjects cannot list; use superSet of one group")
		}
		groups = dedupe(append(groups, t.values...))
	}
	users.values = slices.DeleteFunc(users.values, func(u string) bool { return u == "" }) // never authenticated
	switch {
	case users.empty():
		return nil, true, nil
	case len(groups) > 1:
		return nil, false, field.Invalid(c.path.Child("and"), groups, "not expressible natively: the requests must be in "+
			"every one of these groups, and native group subjects accept members of any one; keep one group per conjunction")
	case !users.all && len(groups) == 1:
		return nil, false, field.Invalid(c.path.Child("and"), groups[0], "not expressible natively: a conjunction "+
			"testing both user and groups needs both to hold, and native subjects accept either; test users or one group")
	case len(groups) == 1 && groups[0] == flowcontrolv1.NameAll:
		return nil, false, wildcardLiteral(c, flowv1.FieldGroups)
	case len(groups) == 1 && groups[0] == "":
		return nil, false, field.Invalid(c.path.Child("and"), "", "not expressible natively: a native group "+
			"subject needs a non-empty group name")
	case len(groups) == 1:
		return []flowcontrolv1.Subject{groupSubject(groups[0])}, false, nil
	case users.all:
		return []flowcontrolv1.Subject{groupSubject(flowcontrolv1.NameAll)}, false, nil
	}
	return userSubjects(users.values, c)
}

func userSubjects(users []string, c *conjunction) ([]flowcontrolv1.Subject, bool, *field.Error) {
	slices.Sort(users)
	out := make([]flowcontrolv1.Subject, 0, len(users))
	for _, u := range users {
		if u == flowcontrolv1.NameAll {
			return nil, false, wildcardLiteral(c, flowv1.FieldUser)
		}
		out = append(out, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser,
			User: &flowcontrolv1.UserSubject{Name: u}})
	}
	return out, false, nil
}

func groupSubject(name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: name}}
}

// wildcardLiteral explains a literal "*", which the native API reads as "every value".
func wildcardLiteral(c *conjunction, f flowv1.RequestField) *field.Error {
	return field.Invalid(c.path.Child("and"), "*", fmt.Sprintf(
		"not expressible natively: the literal value \"*\" on field %s is a wildcard in native rules", f))
}

// resourceRule compiles the conjunction's resource part; none is true when it accepts no
// resource request.
func (c *conjunction) resourceRule() (*flowcontrolv1.ResourcePolicyRule, bool, *field.Error) {
	if c.hasPositive(flowv1.FieldPath) {
		return nil, true, nil
	}
	sets := map[flowv1.RequestField]valueSet{}
	var firstErr *field.Error
	for _, f := range append([]flowv1.RequestField{flowv1.FieldVerb}, resourceOnly...) {
		var domain []string
		if f == flowv1.FieldVerb {
			domain = resourceVerbs
		}
		s, err := constrain(c.byField[f], domain)
		if err == nil && s.empty() {
			return nil, true, nil
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
		sets[f] = s
	}
	if firstErr != nil {
		return nil, false, firstErr
	}
	return c.buildResourceRule(sets)
}

func (c *conjunction) buildResourceRule(sets map[flowv1.RequestField]valueSet) (*flowcontrolv1.ResourcePolicyRule, bool, *field.Error) {
	if !sets[flowv1.FieldName].every() {
		t := c.byField[flowv1.FieldName][0]
		return nil, false, field.Invalid(t.path, t.operand(), "not expressible natively: native rules cannot test an "+
			"object's name; remove the name test or keep this FlowSchema off natively enforced clusters")
	}
	rule := &flowcontrolv1.ResourcePolicyRule{}
	var err *field.Error
	if rule.Verbs, err = c.resourceVerbList(sets[flowv1.FieldVerb]); err != nil {
		return nil, false, err
	}
	if rule.APIGroups, err = c.listOrAll(sets[flowv1.FieldAPIGroup], flowv1.FieldAPIGroup); err != nil {
		return nil, false, err
	}
	if rule.Resources, err = c.resources(sets[flowv1.FieldResource], sets[flowv1.FieldSubresource]); err != nil {
		return nil, false, err
	}
	if err = c.namespaces(rule, sets[flowv1.FieldNamespace]); err != nil {
		return nil, false, err
	}
	if len(rule.Verbs) == 0 || len(rule.Resources) == 0 || (len(rule.Namespaces) == 0 && !rule.ClusterScope) {
		return nil, true, nil // no resource request has these verbs, resources or namespaces
	}
	return rule, false, nil
}

// resourceVerbList is ["*"] when every verb of a resource request is allowed ("" included),
// else the allowed ones, which must not include "": only "*" accepts it.
func (c *conjunction) resourceVerbList(s valueSet) ([]string, *field.Error) {
	switch {
	case s.every():
		return []string{flowcontrolv1.VerbAll}, nil
	case s.all: // every verb but ""
		return slices.Sorted(slices.Values(nativeVerbs)), nil
	}
	out := dedupe(slices.DeleteFunc(slices.Clone(s.values), func(v string) bool { return !slices.Contains(resourceVerbs, v) }))
	switch {
	case len(out) == len(resourceVerbs):
		return []string{flowcontrolv1.VerbAll}, nil
	case slices.Contains(out, ""):
		return nil, c.emptyVerb()
	}
	slices.Sort(out)
	return out, nil
}

// emptyVerb explains an allowed verb "" without every other verb.
func (c *conjunction) emptyVerb() *field.Error {
	path := c.path.Child("and")
	if tests := c.byField[flowv1.FieldVerb]; len(tests) > 0 {
		path = tests[0].path
	}
	return field.Invalid(path, "", "not expressible natively: these tests accept the verb \"\" of resource "+
		"requests whose method is not GET, HEAD, POST, PUT, PATCH or DELETE (OPTIONS, TRACE, custom methods), which "+
		"only the native verb \"*\" (every verb) accepts; allow every verb, or exclude \"\" (e.g. notEquals "+
		"{field: verb, value: \"\"}) to list the others")
}

func (c *conjunction) listOrAll(s valueSet, f flowv1.RequestField) ([]string, *field.Error) {
	if s.every() {
		return []string{flowcontrolv1.APIGroupAll}, nil
	}
	if s.all {
		return nil, nonEmptyOnly(c, f)
	}
	if slices.Contains(s.values, "*") {
		return nil, wildcardLiteral(c, f)
	}
	out := slices.Clone(s.values)
	slices.Sort(out)
	return out, nil
}

// resources joins resource and subresource as native rules name them ("pods", "pods/log").
// The resource "" (a path with an empty segment, /api/v1//pods) is a value like any other:
// "*" accepts it, and a list names it as "" (or "/status" with a subresource), which
// kube-apiserver's rule matching compares like any other entry.
func (c *conjunction) resources(res, sub valueSet) ([]string, *field.Error) {
	switch {
	case res.all && res.nonEmpty:
		return nil, nonEmptyOnly(c, flowv1.FieldResource)
	case sub.all && sub.nonEmpty:
		return nil, nonEmptyOnly(c, flowv1.FieldSubresource)
	case res.all && sub.all:
		return []string{flowcontrolv1.ResourceAll}, nil
	case res.all || sub.all:
		constrained, free := flowv1.FieldResource, flowv1.FieldSubresource
		if res.all {
			constrained, free = free, constrained
		}
		return nil, field.Invalid(c.path.Child("and"), string(constrained), fmt.Sprintf(
			"not expressible natively: %s is constrained but %s is not, and native rules name each resource/subresource "+
				"pair (\"pods\" and \"pods/status\" separately); add an equals or inSet test on %s "+
				"(subresource \"\" is the object itself)", constrained, free, free))
	}
	if err := c.productFits(res.values, sub.values); err != nil {
		return nil, err
	}
	var out []string
	for _, r := range res.values {
		for _, s := range sub.values {
			if r == "*" || s == "*" {
				return nil, wildcardLiteral(c, flowv1.FieldResource)
			}
			if strings.Contains(r, "/") || strings.Contains(s, "/") {
				continue // no request has such a resource or subresource
			}
			joined := r // r is kept for the next subresource
			if s != "" {
				joined += "/" + s
			}
			out = append(out, joined)
		}
	}
	slices.Sort(out)
	return dedupe(out), nil
}

// nonEmptyOnly explains "every value but the empty one" on a field where the empty value is
// one native rules cannot separate (the core API group, no subresource, the resource of a path
// with an empty segment).
func nonEmptyOnly(c *conjunction, f flowv1.RequestField) *field.Error {
	return field.Invalid(c.path.Child("and"), string(f), fmt.Sprintf("not expressible natively: every %s but the "+
		"empty one, and native rules cannot exclude it; list the values with equals or inSet", f))
}

// namespaces sets the rule's namespaces and cluster scope ("" is a cluster-scoped request).
func (c *conjunction) namespaces(rule *flowcontrolv1.ResourcePolicyRule, s valueSet) *field.Error {
	if s.all {
		rule.Namespaces, rule.ClusterScope = []string{flowcontrolv1.NamespaceEvery}, !s.nonEmpty
		return nil
	}
	for _, ns := range s.values {
		switch {
		case ns == "":
			rule.ClusterScope = true
		case ns == "*":
			return wildcardLiteral(c, flowv1.FieldNamespace)
		case len(validation.IsDNS1123Label(ns)) > 0:
			return field.Invalid(c.path.Child("and"), ns, "not expressible natively: native rules list only namespaces "+
				"that are DNS labels, and requests may still name this one")
		default:
			rule.Namespaces = append(rule.Namespaces, ns)
		}
	}
	slices.Sort(rule.Namespaces)
	return nil
}
