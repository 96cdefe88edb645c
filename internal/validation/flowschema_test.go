package validation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// schema returns a valid FlowSchema spec to derive cases from.
func schema() v1alpha1.FlowSchemaSpec {
	return v1alpha1.FlowSchemaSpec{
		MatchingPriority: 100500,
		RequestPriority:  v1alpha1.RequestPriorityReference{Name: "system-high"},
		FlowDistinguisher: &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceUser,
			Transformation: &v1alpha1.Transformation{Regex: "^(tenant-[a-z]+)-.*$"}},
		Match: []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{
			{SuperSet: &v1alpha1.SetTest{Field: v1alpha1.FieldGroups, Set: []string{"system:nodes"}}},
			{Equals: &v1alpha1.ValueTest{Field: v1alpha1.FieldResource, Value: "nodes"}},
		}}},
	}
}

// one returns a spec whose single conjunction holds the single test t.
func one(t v1alpha1.AtomicTest) *v1alpha1.FlowSchemaSpec {
	s := schema()
	s.FlowDistinguisher = nil
	s.Match = []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{t}}}
	return &s
}

var test00 = specPath.Child("match").Index(0).Child("and").Index(0)

func TestFlowSchemaSpec(t *testing.T) {
	with := func(mutate func(*v1alpha1.FlowSchemaSpec)) *v1alpha1.FlowSchemaSpec {
		s := schema()
		mutate(&s)
		return &s
	}
	regexPath := specPath.Child("flowDistinguisher", "transformation", "regex")
	cases := []struct {
		name string
		spec *v1alpha1.FlowSchemaSpec
		want field.ErrorList
	}{
		{"valid", with(func(*v1alpha1.FlowSchemaSpec) {}), nil},
		{"valid match everything", with(func(s *v1alpha1.FlowSchemaSpec) { s.Match = []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{}}} }), nil},
		{"valid namespace source with resource-only conjunctions", with(func(s *v1alpha1.FlowSchemaSpec) {
			s.FlowDistinguisher = &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceNamespace}
		}), nil},
		{"nil spec", nil, field.ErrorList{field.Required(specPath, "set matchingPriority, requestPriority and match")}},
		{"negative matching priority", with(func(s *v1alpha1.FlowSchemaSpec) { s.MatchingPriority = -1 }), field.ErrorList{
			field.Invalid(specPath.Child("matchingPriority"), int32(-1), "between 0 and 1000000000")}},
		{"empty reference", with(func(s *v1alpha1.FlowSchemaSpec) { s.RequestPriority.Name = "" }), field.ErrorList{
			field.Required(specPath.Child("requestPriority", "name"), "name the RequestPriority")}},
		{"reference not an object name", with(func(s *v1alpha1.FlowSchemaSpec) { s.RequestPriority.Name = "System_High" }), field.ErrorList{
			field.Invalid(specPath.Child("requestPriority", "name"), "System_High", "not a valid object name: a lowercase RFC 1123 subdomain")}},
		{"unknown source", with(func(s *v1alpha1.FlowSchemaSpec) { s.FlowDistinguisher.Source = "group" }), field.ErrorList{
			field.NotSupported(specPath.Child("flowDistinguisher", "source"), v1alpha1.DistinguisherSource("group"),
				[]v1alpha1.DistinguisherSource{"user", "namespace"})}},
		{"empty source", with(func(s *v1alpha1.FlowSchemaSpec) { s.FlowDistinguisher.Source = "" }), field.ErrorList{
			field.Required(specPath.Child("flowDistinguisher", "source"), `set "user" or "namespace"`)}},
		{"namespace source with a non-resource conjunction", with(func(s *v1alpha1.FlowSchemaSpec) {
			s.FlowDistinguisher.Source = v1alpha1.SourceNamespace
			s.Match = append(s.Match, v1alpha1.Conjunction{And: []v1alpha1.AtomicTest{
				{NotPatternMatch: &v1alpha1.PatternTest{Field: v1alpha1.FieldUser, Pattern: "system:serviceaccount:.*"}}}})
		}), field.ErrorList{field.Invalid(specPath.Child("flowDistinguisher", "source"), v1alpha1.SourceNamespace,
			"but match[1] may accept non-resource requests")}},
		{"regex without capturing group", with(func(s *v1alpha1.FlowSchemaSpec) { s.FlowDistinguisher.Transformation.Regex = "tenant-.*" }),
			field.ErrorList{field.Invalid(regexPath, "tenant-.*", "has no capturing group")}},
		{"regex with only a non-capturing group", with(func(s *v1alpha1.FlowSchemaSpec) { s.FlowDistinguisher.Transformation.Regex = "(?:a)b" }),
			field.ErrorList{field.Invalid(regexPath, "(?:a)b", "has no capturing group")}},
		{"regex not RE2", with(func(s *v1alpha1.FlowSchemaSpec) { s.FlowDistinguisher.Transformation.Regex = "(a(?=b))" }),
			field.ErrorList{field.Invalid(regexPath, "(a(?=b))", "not an RE2 regular expression: error parsing regexp: invalid or unsupported Perl syntax")}},
		{"regex empty", with(func(s *v1alpha1.FlowSchemaSpec) { s.FlowDistinguisher.Transformation.Regex = "" }),
			field.ErrorList{field.Required(regexPath, "set an RE2 regular expression")}},
		{"regex too long", with(func(s *v1alpha1.FlowSchemaSpec) {
			s.FlowDistinguisher.Transformation.Regex = "(" + strings.Repeat("é", 511) + ")"
		}), field.ErrorList{field.TooLongCharacters(regexPath, "", 512)}},
		{"match absent", with(func(s *v1alpha1.FlowSchemaSpec) { s.Match = nil }), field.ErrorList{
			field.Required(specPath.Child("match"), "`- and: []` matches every request")}},
		{"conjunction without and", with(func(s *v1alpha1.FlowSchemaSpec) { s.Match = []v1alpha1.Conjunction{{}} }), field.ErrorList{
			field.Required(specPath.Child("match").Index(0).Child("and"), "`and: []` accepts every request")}},
		{"too many conjunctions", with(func(s *v1alpha1.FlowSchemaSpec) {
			s.Match = make([]v1alpha1.Conjunction, 65)
			for i := range s.Match {
				s.Match[i].And = []v1alpha1.AtomicTest{}
			}
		}), field.ErrorList{field.TooMany(specPath.Child("match"), 65, 64)}},
		{"too many tests", with(func(s *v1alpha1.FlowSchemaSpec) {
			tests := make([]v1alpha1.AtomicTest, 33)
			for i := range tests {
				tests[i].Equals = &v1alpha1.ValueTest{Field: v1alpha1.FieldVerb, Value: "get"}
			}
			s.Match = []v1alpha1.Conjunction{{And: tests}}
		}), field.ErrorList{field.TooMany(specPath.Child("match").Index(0).Child("and"), 33, 32)}},
		{"test without operator", one(v1alpha1.AtomicTest{}), field.ErrorList{
			field.Required(test00, "an atomic test takes exactly one operator: set one of equals, notEquals")}},
		{"test with two operators", one(v1alpha1.AtomicTest{
			Equals: &v1alpha1.ValueTest{Field: v1alpha1.FieldVerb, Value: "get"},
			InSet:  &v1alpha1.SetTest{Field: v1alpha1.FieldVerb, Set: []string{"list"}},
		}), field.ErrorList{field.Forbidden(test00.Child("inSet"),
			"this one already has equals: move inSet to a test of its own")}},
		{"unknown field", one(v1alpha1.AtomicTest{Equals: &v1alpha1.ValueTest{Field: "host", Value: "x"}}), field.ErrorList{
			field.NotSupported(test00.Child("equals", "field"), v1alpha1.RequestField("host"), allFields)}},
		{"empty field", one(v1alpha1.AtomicTest{Equals: &v1alpha1.ValueTest{Value: "x"}}), field.ErrorList{
			field.Required(test00.Child("equals", "field"), "one of groups, user, verb")}},
		{"superSet of a scalar field", one(v1alpha1.AtomicTest{SuperSet: &v1alpha1.SetTest{Field: v1alpha1.FieldUser, Set: []string{"a"}}}),
			field.ErrorList{field.Invalid(test00.Child("superSet", "field"), v1alpha1.FieldUser, "superSet applies only to field groups")}},
		{"equals on groups", one(v1alpha1.AtomicTest{Equals: &v1alpha1.ValueTest{Field: v1alpha1.FieldGroups, Value: "a"}}),
			field.ErrorList{field.Invalid(test00.Child("equals", "field"), v1alpha1.FieldGroups, "test groups with superSet or notSuperSet")}},
		{"notInSet on groups", one(v1alpha1.AtomicTest{NotInSet: &v1alpha1.SetTest{Field: v1alpha1.FieldGroups, Set: []string{"a"}}}),
			field.ErrorList{field.Invalid(test00.Child("notInSet", "field"), v1alpha1.FieldGroups, "field groups is a set")}},
		{"empty set", one(v1alpha1.AtomicTest{InSet: &v1alpha1.SetTest{Field: v1alpha1.FieldVerb}}), field.ErrorList{
			field.Required(test00.Child("inSet", "set"), "list at least one value")}},
		{"set too large", one(v1alpha1.AtomicTest{InSet: &v1alpha1.SetTest{Field: v1alpha1.FieldVerb, Set: make([]string, 257)}}),
			field.ErrorList{field.TooMany(test00.Child("inSet", "set"), 257, 256)}},
		{"set value too long", one(v1alpha1.AtomicTest{NotSuperSet: &v1alpha1.SetTest{Field: v1alpha1.FieldGroups,
			Set: []string{"ok", strings.Repeat("g", 1025)}}}),
			field.ErrorList{field.TooLongCharacters(test00.Child("notSuperSet", "set").Index(1), "", 1024)}},
		{"value too long", one(v1alpha1.AtomicTest{NotEquals: &v1alpha1.ValueTest{Field: v1alpha1.FieldName, Value: strings.Repeat("n", 1025)}}),
			field.ErrorList{field.TooLongCharacters(test00.Child("notEquals", "value"), "", 1024)}},
		{"pattern not RE2", one(v1alpha1.AtomicTest{PatternMatch: &v1alpha1.PatternTest{Field: v1alpha1.FieldUser, Pattern: "a**"}}),
			field.ErrorList{field.Invalid(test00.Child("patternMatch", "pattern"), "a**", "not an RE2 regular expression")}},
		{"pattern empty", one(v1alpha1.AtomicTest{NotPatternMatch: &v1alpha1.PatternTest{Field: v1alpha1.FieldPath}}),
			field.ErrorList{field.Required(test00.Child("notPatternMatch", "pattern"), "set an RE2 regular expression")}},
		{"pattern on groups", one(v1alpha1.AtomicTest{PatternMatch: &v1alpha1.PatternTest{Field: v1alpha1.FieldGroups, Pattern: ".*"}}),
			field.ErrorList{field.Invalid(test00.Child("patternMatch", "field"), v1alpha1.FieldGroups, "field groups is a set")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs, warnings := FlowSchemaSpec(c.spec, specPath)
			matcher.Test(t, c.want, errs)
			if len(warnings) != 0 {
				t.Errorf("warnings = %q, want none", warnings)
			}
		})
	}
}

func TestFlowSchemaSpecEmptyMatchWarns(t *testing.T) {
	s := schema()
	s.Match = []v1alpha1.Conjunction{}
	errs, warnings := FlowSchemaSpec(&s, specPath)
	if len(errs) != 0 {
		t.Fatalf("errors = %v, want none", errs)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "spec.match: the FlowSchema matches no request") {
		t.Fatalf("warnings = %q, want one on spec.match", warnings)
	}
}

func TestResourceOnly(t *testing.T) {
	c := func(tests ...v1alpha1.AtomicTest) v1alpha1.Conjunction { return v1alpha1.Conjunction{And: tests} }
	cases := []struct {
		name string
		c    v1alpha1.Conjunction
		want bool
	}{
		{"empty accepts everything", c(), false},
		{"equals resource", c(v1alpha1.AtomicTest{Equals: &v1alpha1.ValueTest{Field: v1alpha1.FieldResource, Value: "pods"}}), true},
		{"inSet namespace", c(v1alpha1.AtomicTest{InSet: &v1alpha1.SetTest{Field: v1alpha1.FieldNamespace, Set: []string{"a"}}}), true},
		{"patternMatch apiGroup", c(v1alpha1.AtomicTest{PatternMatch: &v1alpha1.PatternTest{Field: v1alpha1.FieldAPIGroup, Pattern: ".*"}}), true},
		{"equals subresource", c(v1alpha1.AtomicTest{Equals: &v1alpha1.ValueTest{Field: v1alpha1.FieldSubresource, Value: "status"}}), true},
		{"equals name", c(v1alpha1.AtomicTest{Equals: &v1alpha1.ValueTest{Field: v1alpha1.FieldName, Value: "x"}}), true},
		{"negative test proves nothing", c(v1alpha1.AtomicTest{NotEquals: &v1alpha1.ValueTest{Field: v1alpha1.FieldResource, Value: "pods"}}), false},
		{"notInSet proves nothing", c(v1alpha1.AtomicTest{NotInSet: &v1alpha1.SetTest{Field: v1alpha1.FieldNamespace, Set: []string{"a"}}}), false},
		{"notPatternMatch proves nothing", c(v1alpha1.AtomicTest{NotPatternMatch: &v1alpha1.PatternTest{Field: v1alpha1.FieldName, Pattern: "x"}}), false},
		{"identity test proves nothing", c(v1alpha1.AtomicTest{Equals: &v1alpha1.ValueTest{Field: v1alpha1.FieldUser, Value: "u"}},
			v1alpha1.AtomicTest{SuperSet: &v1alpha1.SetTest{Field: v1alpha1.FieldGroups, Set: []string{"g"}}}), false},
		{"verb test proves nothing", c(v1alpha1.AtomicTest{Equals: &v1alpha1.ValueTest{Field: v1alpha1.FieldVerb, Value: "get"}}), false},
		{"one positive among others", c(v1alpha1.AtomicTest{NotEquals: &v1alpha1.ValueTest{Field: v1alpha1.FieldUser, Value: "u"}},
			v1alpha1.AtomicTest{PatternMatch: &v1alpha1.PatternTest{Field: v1alpha1.FieldResource, Pattern: ".*"}}), true},
	}
	for _, tc := range cases {
		if got := ResourceOnly(tc.c); got != tc.want {
			t.Errorf("%s: ResourceOnly = %v, want %v", tc.name, got, tc.want)
		}
	}
}
