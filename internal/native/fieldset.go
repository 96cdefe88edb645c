package native

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// valueSet is what a conjunction allows for one scalar field: every value (every value but ""
// with nonEmpty), or a finite set.
type valueSet struct {
	all      bool
	nonEmpty bool
	values   []string
}

func (s valueSet) empty() bool { return !s.all && len(s.values) == 0 }

// every reports whether the set holds every value of a field that can be empty.
func (s valueSet) every() bool { return s.all && !s.nonEmpty }

// constrain reduces the tests of one field to a valueSet. domain is the finite set of values
// the field can take in the part being compiled, or nil when it is unbounded. The result is
// exact: it holds a present value v iff every test accepts v (values with a newline aside,
// see the package doc).
func constrain(tests []*test, domain []string) (valueSet, *field.Error) {
	set, rest := valueSet{all: true}, []*test{}
	// m tracks the finite set for the set tests: 32 sets of 256 values cost no map each.
	var m members
	for _, t := range tests { // finite positives first: they bound the set
		if lang, ok := t.language(); ok && lang.finite && !t.negate {
			set = m.intersect(set, lang.values)
			continue
		}
		rest = append(rest, t)
	}
	for _, t := range rest {
		lang, known := t.language()
		switch {
		case known && lang.all && !lang.nonEmpty && !t.negate:
			continue // accepts every value
		case known && lang.all && !lang.nonEmpty:
			return valueSet{}, nil // accepts no value
		case set.all && excludesOnlyEmpty(t, lang, known):
			set.nonEmpty = true
			continue
		case set.all && known && lang.all && lang.nonEmpty: // a negated ".+": only ""
			set = valueSet{values: []string{""}}
		case set.all && domain == nil:
			return set, unbounded(t)
		case set.all:
			set = valueSet{values: slices.DeleteFunc(slices.Clone(domain), func(v string) bool {
				return set.nonEmpty && v == "" // an earlier test excluded ""
			})}
		}
		if !t.affordable(set.values) {
			return valueSet{}, evalOverBudget(t, set.values)
		}
		if !t.isPattern { // a negated set
			set.values = m.drop(set.values, t.values)
			continue
		}
		set.values = slices.DeleteFunc(set.values, func(v string) bool { return !t.accepts(v) })
	}
	return set, nil
}

// excludesOnlyEmpty reports whether a test accepts exactly the non-empty values: ".+", or the
// negation of "" (notEquals "", notInSet [""]).
func excludesOnlyEmpty(t *test, lang language, known bool) bool {
	if !known {
		return false
	}
	if lang.all && lang.nonEmpty {
		return !t.negate
	}
	return t.negate && lang.finite && len(lang.values) == 1 && lang.values[0] == ""
}

// unbounded explains a test that leaves an unbounded set of values the native API cannot list.
func unbounded(t *test) *field.Error {
	if err := languageOverBudget(t); err != nil {
		return err
	}
	what := "a negation"
	switch {
	case t.isPattern && !t.negate:
		what = fmt.Sprintf("pattern %q accepts an unbounded set of values", t.pattern)
	case t.isPattern:
		what = fmt.Sprintf("the negated pattern %q accepts an unbounded set of values", t.pattern)
	default:
		what += " accepts an unbounded set of values"
	}
	return field.Invalid(t.path, t.operand(), fmt.Sprintf(
		"not expressible natively: on field %s, %s, and native rules can only list values; "+
			"use equals or inSet (or a pattern of finitely many values) on %s, or add a positive test that bounds it",
		t.field, what, t.field))
}
