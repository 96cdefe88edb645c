package validation

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// scalarFields are the fields that hold one value; groups is the only set-valued field.
var scalarFields = []v1alpha1.RequestField{
	v1alpha1.FieldUser, v1alpha1.FieldVerb, v1alpha1.FieldAPIGroup, v1alpha1.FieldResource,
	v1alpha1.FieldSubresource, v1alpha1.FieldNamespace, v1alpha1.FieldName, v1alpha1.FieldPath,
}

// allFields are the fields an atomic test can name.
var allFields = append([]v1alpha1.RequestField{v1alpha1.FieldGroups}, scalarFields...)

// resourceAttributes are the attributes that a non-resource request lacks (DESIGN.md
// decision 4).
var resourceAttributes = map[v1alpha1.RequestField]bool{
	v1alpha1.FieldAPIGroup: true, v1alpha1.FieldResource: true, v1alpha1.FieldSubresource: true,
	v1alpha1.FieldNamespace: true, v1alpha1.FieldName: true,
}

// ResourceOnly reports whether a conjunction accepts only resource requests. The rule
// (DESIGN.md decision 4): apiGroup, resource, subresource, namespace and name are absent for a
// non-resource request, and a positive test (equals, inSet, patternMatch) of an absent
// attribute is false; so a conjunction containing a positive test of one of them rejects every
// non-resource request. Negative tests (notEquals, notInSet, notPatternMatch) of an absent
// attribute are true and prove nothing; superSet applies only to groups.
func ResourceOnly(c v1alpha1.Conjunction) bool {
	for _, t := range c.And {
		if (t.Equals != nil && resourceAttributes[t.Equals.Field]) ||
			(t.InSet != nil && resourceAttributes[t.InSet.Field]) ||
			(t.PatternMatch != nil && resourceAttributes[t.PatternMatch.Field]) {
			return true
		}
	}
	return false
}

// match checks spec.match.
func match(conjunctions []v1alpha1.Conjunction, p *field.Path, budget *regexBudget) (field.ErrorList, []string) {
	if conjunctions == nil {
		return field.ErrorList{field.Required(p, "list the conjunctions; `- and: []` matches every request")}, nil
	}
	var warnings []string
	if len(conjunctions) == 0 {
		warnings = append(warnings, p.String()+": the FlowSchema matches no request (match is empty); "+
			"add a conjunction, for example `- and: []` to match every request")
	}
	var errs field.ErrorList
	if len(conjunctions) > MaxConjunctions {
		errs = append(errs, field.TooMany(p, len(conjunctions), MaxConjunctions))
	}
	for i, c := range conjunctions {
		errs = append(errs, conjunction(c, p.Index(i).Child("and"), budget)...)
	}
	return errs, warnings
}

// conjunction checks the atomic tests of one conjunction.
func conjunction(c v1alpha1.Conjunction, p *field.Path, budget *regexBudget) field.ErrorList {
	if c.And == nil {
		return field.ErrorList{field.Required(p, "list the atomic tests; `and: []` accepts every request")}
	}
	var errs field.ErrorList
	if len(c.And) > MaxAtomicTests {
		errs = append(errs, field.TooMany(p, len(c.And), MaxAtomicTests))
	}
	for j := range c.And {
		errs = append(errs, atomicTest(&c.And[j], p.Index(j), budget)...)
	}
	return errs
}

// operator is one operator of an atomic test with its operand, at most one of which is set.
type operator struct {
	name    string
	value   *v1alpha1.ValueTest
	set     *v1alpha1.SetTest
	pattern *v1alpha1.PatternTest
}

// present reports whether the operator is set in the test.
func (o operator) present() bool { return o.value != nil || o.set != nil || o.pattern != nil }

// operators lists the eight operators of t in API order.
func operators(t *v1alpha1.AtomicTest) []operator {
	return []operator{
		{name: "equals", value: t.Equals}, {name: "notEquals", value: t.NotEquals},
		{name: "inSet", set: t.InSet}, {name: "notInSet", set: t.NotInSet},
		{name: "superSet", set: t.SuperSet}, {name: "notSuperSet", set: t.NotSuperSet},
		{name: "patternMatch", pattern: t.PatternMatch}, {name: "notPatternMatch", pattern: t.NotPatternMatch},
	}
}

// operatorNames is the list of operator names for messages.
const operatorNames = "equals, notEquals, inSet, notInSet, superSet, notSuperSet, patternMatch, notPatternMatch"

// atomicTest checks that t has exactly one operator and that its operand is valid.
func atomicTest(t *v1alpha1.AtomicTest, p *field.Path, budget *regexBudget) field.ErrorList {
	var errs field.ErrorList
	first := ""
	for _, op := range operators(t) {
		if !op.present() {
			continue
		}
		if first != "" {
			errs = append(errs, field.Forbidden(p.Child(op.name), fmt.Sprintf(
				"an atomic test takes exactly one operator and this one already has %s: move %s to a test of its own",
				first, op.name)))
			continue
		}
		first = op.name
		errs = append(errs, operand(op, p.Child(op.name), budget)...)
	}
	if first == "" {
		errs = append(errs, field.Required(p, "an atomic test takes exactly one operator: set one of "+operatorNames))
	}
	return errs
}

// operand checks the field and the literal of one operator.
func operand(op operator, p *field.Path, budget *regexBudget) field.ErrorList {
	switch {
	case op.value != nil:
		errs := testField(op.name, op.value.Field, p.Child("field"))
		if utf8.RuneCountInString(op.value.Value) > MaxValueLength {
			errs = append(errs, field.TooLongCharacters(p.Child("value"), op.value.Value, MaxValueLength))
		}
		return errs
	case op.set != nil:
		return append(testField(op.name, op.set.Field, p.Child("field")), setItems(op.set.Set, p.Child("set"))...)
	default:
		return append(testField(op.name, op.pattern.Field, p.Child("field")),
			regexSyntax(op.pattern.Pattern, p.Child("pattern"), budget)...)
	}
}

// testField checks that the field is known and of the kind the operator takes: superSet and
// notSuperSet take groups, every other operator a scalar field.
func testField(opName string, f v1alpha1.RequestField, p *field.Path) field.ErrorList {
	setOperator := opName == "superSet" || opName == "notSuperSet"
	switch {
	case f == "":
		return field.ErrorList{field.Required(p, "name the request attribute to test: one of "+fieldNames())}
	case !isKnownField(f):
		return field.ErrorList{field.NotSupported(p, f, allFields)}
	case setOperator && f != v1alpha1.FieldGroups:
		return field.ErrorList{field.Invalid(p, f, fmt.Sprintf(
			"%s applies only to field groups: use field groups, or inSet/notInSet for the scalar field %s", opName, f))}
	case !setOperator && f == v1alpha1.FieldGroups:
		return field.ErrorList{field.Invalid(p, f, fmt.Sprintf(
			"field groups is a set and %s compares one value: test groups with superSet or notSuperSet", opName))}
	}
	return nil
}

// setItems checks the set of a set operator.
func setItems(set []string, p *field.Path) field.ErrorList {
	switch {
	case len(set) == 0:
		return field.ErrorList{field.Required(p, "list at least one value")}
	case len(set) > MaxSetItems:
		return field.ErrorList{field.TooMany(p, len(set), MaxSetItems)}
	}
	var errs field.ErrorList
	for i, v := range set {
		if utf8.RuneCountInString(v) > MaxValueLength {
			errs = append(errs, field.TooLongCharacters(p.Index(i), v, MaxValueLength))
		}
	}
	return errs
}

func isKnownField(f v1alpha1.RequestField) bool {
	for _, k := range allFields {
		if f == k {
			return true
		}
	}
	return false
}

func fieldNames() string {
	names := make([]string, len(allFields))
	for i, f := range allFields {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}
