package native

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"slices"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// test is one atomic test in the form the compiler reasons about.
type test struct {
	field  flowv1.RequestField
	negate bool
	// values holds the operand of equals, inSet, superSet and their negations.
	values []string
	// pattern is set for patternMatch and notPatternMatch; re is compiled on first use, since
	// most patterns are reduced to a language without ever being evaluated.
	pattern   string
	isPattern bool
	path      *field.Path
	// bounds are the budgets of the FlowSchema, which also keep each pattern's analysis.
	bounds *bounds
	// set holds values for lookups, built on the first one.
	set map[string]struct{}
}

// newTest reads an atomic test; path is the path of the test (spec.match[i].and[j]) and b the
// analysis budget of its FlowSchema.
func newTest(in *flowv1.AtomicTest, path *field.Path, b *bounds) test {
	t := readTest(in, path)
	t.bounds = b
	return t
}

func readTest(in *flowv1.AtomicTest, path *field.Path) test {
	switch {
	case in.Equals != nil:
		return test{field: in.Equals.Field, values: []string{in.Equals.Value}, path: path.Child("equals")}
	case in.NotEquals != nil:
		return test{field: in.NotEquals.Field, negate: true, values: []string{in.NotEquals.Value}, path: path.Child("notEquals")}
	case in.InSet != nil:
		return test{field: in.InSet.Field, values: in.InSet.Set, path: path.Child("inSet")}
	case in.NotInSet != nil:
		return test{field: in.NotInSet.Field, negate: true, values: in.NotInSet.Set, path: path.Child("notInSet")}
	case in.SuperSet != nil:
		return test{field: in.SuperSet.Field, values: in.SuperSet.Set, path: path.Child("superSet")}
	case in.NotSuperSet != nil:
		return test{field: in.NotSuperSet.Field, negate: true, values: in.NotSuperSet.Set, path: path.Child("notSuperSet")}
	case in.PatternMatch != nil:
		return patternTest(in.PatternMatch, false, path.Child("patternMatch"))
	case in.NotPatternMatch != nil:
		return patternTest(in.NotPatternMatch, true, path.Child("notPatternMatch"))
	}
	return test{path: path}
}

func patternTest(p *flowv1.PatternTest, negate bool, path *field.Path) test {
	return test{field: p.Field, negate: negate, pattern: p.Pattern, isPattern: true, path: path}
}

// holds evaluates the positive form of the test on a present scalar value. A pattern whose
// language is finite is looked up in it, without running the regular expression.
func (t *test) holds(v string) bool {
	switch {
	case !t.isPattern && len(t.values) <= 16:
		return slices.Contains(t.values, v)
	case !t.isPattern:
		if t.set == nil {
			t.set = lookup(t.values)
		}
		_, ok := t.set[v]
		return ok
	}
	p := t.bounds.pattern(t.pattern)
	if p.ok && p.lang.finite {
		if p.set == nil {
			p.set = lookup(p.lang.values)
		}
		_, ok := p.set[v]
		return ok
	}
	return p.matcher(t.pattern).MatchString(v)
}

// lookup is a set of values for lookups.
func lookup(values []string) map[string]struct{} {
	out := make(map[string]struct{}, len(values))
	for _, v := range values {
		out[v] = struct{}{}
	}
	return out
}

// accepts evaluates the test on a present scalar value.
func (t *test) accepts(v string) bool { return t.holds(v) != t.negate }

// language is the positive form's language, and false when it has no usable form.
func (t *test) language() (language, bool) {
	if !t.isPattern {
		return language{finite: true, values: t.values}, true
	}
	p := t.bounds.pattern(t.pattern)
	return p.lang, p.ok
}

// affordable takes from the budget the work of evaluating the test on values, and reports
// whether it fits. Only a pattern without a finite language runs a regular expression; its
// compiled program is charged to the analysis budget too.
func (t *test) affordable(values []string) bool {
	if lang, ok := t.language(); !t.isPattern || (ok && lang.finite) {
		return true
	}
	p := t.bounds.pattern(t.pattern)
	switch {
	case p.lang.overBudget:
		return false
	case p.tree == nil:
		return true // does not parse: holds matches nothing, no work
	}
	if p.re == nil && !t.bounds.analysis(p.insts*nodeBytes) {
		return false
	}
	return t.bounds.eval(p.insts, values)
}

// operand is the test's literal, for error messages.
func (t *test) operand() any {
	switch {
	case t.isPattern:
		return t.pattern
	case len(t.values) == 1:
		return t.values[0]
	}
	return t.values
}
