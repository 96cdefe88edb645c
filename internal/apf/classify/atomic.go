package classify

import (
	"fmt"
	"regexp"
	"slices"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// operator is the positive form of an atomic test's operator.
type operator uint8

const (
	opEquals operator = iota
	opInSet
	opSuperSet
	opPattern
)

// smallSet is the largest inSet tested by a linear scan rather than a map.
const smallSet = 8

// atomicTest is a compiled atomic test.
type atomicTest struct {
	field  field
	op     operator
	negate bool
	value  string              // opEquals
	set    []string            // opInSet, opSuperSet
	member map[string]struct{} // opInSet with more than smallSet values
	re     *pattern            // opPattern
}

// accepts evaluates the test against a.
func (t *atomicTest) accepts(a *request.Attributes) bool { return t.holds(a) != t.negate }

// holds evaluates the positive form of the test: false when the attribute is absent.
func (t *atomicTest) holds(a *request.Attributes) bool {
	if t.op == opSuperSet {
		return containsAll(a.Groups, t.set)
	}
	v, ok := value(a, t.field)
	if !ok {
		return false
	}
	switch t.op {
	case opEquals:
		return v == t.value
	case opInSet:
		if t.member != nil {
			_, in := t.member[v]
			return in
		}
		return slices.Contains(t.set, v)
	case opPattern:
		return t.re.match(v)
	}
	return false
}

// containsAll reports whether groups includes every member of set.
func containsAll(groups, set []string) bool {
	for _, s := range set {
		if !slices.Contains(groups, s) {
			return false
		}
	}
	return true
}

// indexable reports whether the test can file its conjunction in the index: a positive
// equality or membership test. An empty superSet holds for every request: it cannot.
func (t *atomicTest) indexable() bool {
	return !t.negate && t.op != opPattern && (t.op != opSuperSet || len(t.set) > 0)
}

// keys are the values the test files its conjunction under.
func (t *atomicTest) keys() []string {
	if t.op == opEquals {
		return []string{t.value}
	}
	return t.set
}

// compileAtomic compiles one atomic test. The effective configuration holds only validated
// FlowSchemas, so an error here means a caller built a Config by hand; the conjunction then
// matches nothing.
func compileAtomic(in *flowv1.AtomicTest, patterns patternCache) (atomicTest, error) {
	var out atomicTest
	n := 0
	set := func(name flowv1.RequestField, op operator, negate bool) {
		n++
		f, known := fieldsByName[name]
		if !known {
			f = numFields // rejected by finish
		}
		out.field, out.op, out.negate = f, op, negate
	}
	if in.Equals != nil {
		set(in.Equals.Field, opEquals, false)
		out.value = in.Equals.Value
	}
	if in.NotEquals != nil {
		set(in.NotEquals.Field, opEquals, true)
		out.value = in.NotEquals.Value
	}
	if in.InSet != nil {
		set(in.InSet.Field, opInSet, false)
		out.set = in.InSet.Set
	}
	if in.NotInSet != nil {
		set(in.NotInSet.Field, opInSet, true)
		out.set = in.NotInSet.Set
	}
	if in.SuperSet != nil {
		set(in.SuperSet.Field, opSuperSet, false)
		out.set = in.SuperSet.Set
	}
	if in.NotSuperSet != nil {
		set(in.NotSuperSet.Field, opSuperSet, true)
		out.set = in.NotSuperSet.Set
	}
	if in.PatternMatch != nil {
		set(in.PatternMatch.Field, opPattern, false)
	}
	if in.NotPatternMatch != nil {
		set(in.NotPatternMatch.Field, opPattern, true)
	}
	if n != 1 {
		return out, fmt.Errorf("an atomic test takes exactly one operator, this one has %d", n)
	}
	return out, out.finish(in, patterns)
}

// finish checks the field against the operator and compiles the operand.
func (t *atomicTest) finish(in *flowv1.AtomicTest, patterns patternCache) error {
	switch {
	case t.field == numFields:
		return fmt.Errorf("unknown field")
	case (t.op == opSuperSet) != (t.field == fieldGroups):
		return fmt.Errorf("superSet and notSuperSet apply to groups, and only they do")
	case t.op == opPattern:
		p := in.PatternMatch
		if p == nil {
			p = in.NotPatternMatch
		}
		re, err := patterns.compile(p.Pattern)
		if err != nil {
			return err
		}
		t.re = specialize(p.Pattern, re)
	case t.op == opInSet && len(t.set) > smallSet:
		t.member = make(map[string]struct{}, len(t.set))
		for _, v := range t.set {
			t.member[v] = struct{}{}
		}
	}
	return nil
}

// patternCache compiles each distinct pattern of a configuration once.
type patternCache map[string]*regexp.Regexp

// compile compiles re anchored at both ends: patterns match the whole value.
func (c patternCache) compile(re string) (*regexp.Regexp, error) {
	if r, ok := c[re]; ok {
		return r, nil
	}
	if _, err := regexp.Compile(re); err != nil {
		return nil, err
	}
	r, err := regexp.Compile(`^(?:` + re + `)$`)
	if err != nil {
		return nil, err
	}
	c[re] = r
	return r, nil
}
