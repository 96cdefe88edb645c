// Package apitest holds what the tests of several packages share: the parts of FlowSchema
// match expressions, built in one call each, and a check of a package's dependencies.
package apitest

import flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"

// And is the conjunction of tests, on a copy of them; no tests is the conjunction that matches
// every request.
func And(tests ...flowv1.AtomicTest) flowv1.Conjunction {
	return flowv1.Conjunction{And: append([]flowv1.AtomicTest{}, tests...)}
}

// Equals is the atomic test field == v.
func Equals(f flowv1.RequestField, v string) flowv1.AtomicTest {
	return flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: f, Value: v}}
}

// NotEquals is the atomic test field != v.
func NotEquals(f flowv1.RequestField, v string) flowv1.AtomicTest {
	return flowv1.AtomicTest{NotEquals: &flowv1.ValueTest{Field: f, Value: v}}
}

// InSet is the atomic test field ∈ set.
func InSet(f flowv1.RequestField, set ...string) flowv1.AtomicTest {
	return flowv1.AtomicTest{InSet: &flowv1.SetTest{Field: f, Set: set}}
}

// NotInSet is the atomic test field ∉ set.
func NotInSet(f flowv1.RequestField, set ...string) flowv1.AtomicTest {
	return flowv1.AtomicTest{NotInSet: &flowv1.SetTest{Field: f, Set: set}}
}

// SuperSet is the atomic test groups ⊇ set.
func SuperSet(set ...string) flowv1.AtomicTest {
	return flowv1.AtomicTest{SuperSet: &flowv1.SetTest{Field: flowv1.FieldGroups, Set: set}}
}

// NotSuperSet is the atomic test groups ⊉ set.
func NotSuperSet(set ...string) flowv1.AtomicTest {
	return flowv1.AtomicTest{NotSuperSet: &flowv1.SetTest{Field: flowv1.FieldGroups, Set: set}}
}

// PatternMatch is the atomic test that field matches the regular expression p.
func PatternMatch(f flowv1.RequestField, p string) flowv1.AtomicTest {
	return flowv1.AtomicTest{PatternMatch: &flowv1.PatternTest{Field: f, Pattern: p}}
}

// NotPatternMatch is the atomic test that field does not match the regular expression p.
func NotPatternMatch(f flowv1.RequestField, p string) flowv1.AtomicTest {
	return flowv1.AtomicTest{NotPatternMatch: &flowv1.PatternTest{Field: f, Pattern: p}}
}
