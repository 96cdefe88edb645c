package native

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// overlapWitness is a value that no test mentions: a user or object name whose tests are all
// negations is satisfiable when it passes them, and a resource that narrowings may choose.
const overlapWitness = "apf-operator.overlap-witness"

// Intersect reports whether one request can match both a's and b's match, by the analysis the
// projection uses: some conjunction of a and some conjunction of b accept a common request
// exactly when the conjunction of all their tests accepts one. Attributes no other attribute
// constrains are decided apart:
//   - groups: the superSets require the union U of their groups, and a notSuperSet of S fails
//     for every request whose groups include S, so they hold together exactly when no
//     notSuperSet's S is within U;
//   - user and name: their tests are evaluated on the values they list plus a witness no test
//     mentions (a positive name test also requires a resource request).
//
// The other tests are compiled into one native rule, which is nil exactly when they accept no
// request; when native rules cannot express them, narrower forms are tried (narrowings). It returns false when no overlap is proven: a pair the analysis cannot
// decide (a pattern on a path or user that it cannot list) or one past its budgets is not
// reported. The webhook and the offline validator pass it to validation.Overlaps.
func Intersect(a, b *flowv1.FlowSchemaSpec) bool {
	for i := range a.Match {
		for j := range b.Match {
			if conjunctionsIntersect(&a.Match[i], &b.Match[j]) {
				return true
			}
		}
	}
	return false
}

func conjunctionsIntersect(a, b *flowv1.Conjunction) bool {
	var rest flowv1.Conjunction
	var required []string
	var forbidden [][]string
	apart := map[flowv1.RequestField][]flowv1.AtomicTest{}
	for _, c := range []*flowv1.Conjunction{a, b} {
		for _, t := range c.And {
			switch f := testField(&t); {
			case t.SuperSet != nil && f == flowv1.FieldGroups:
				required = append(required, t.SuperSet.Set...)
			case t.NotSuperSet != nil && f == flowv1.FieldGroups:
				forbidden = append(forbidden, t.NotSuperSet.Set)
			case f == flowv1.FieldUser || f == flowv1.FieldName:
				apart[f] = append(apart[f], t)
			default:
				rest.And = append(rest.And, t)
			}
		}
	}
	for _, s := range forbidden {
		if subset(s, required) {
			return false
		}
	}
	b0 := newBounds()
	for f, tests := range apart {
		satisfiable, decided := satisfiableApart(tests, b0)
		switch {
		case decided && !satisfiable:
			return false
		case !decided:
			rest.And = append(rest.And, tests...)
		case f == flowv1.FieldName && hasPositiveTest(tests):
			rest.And = append(rest.And, anyResource)
		}
	}
	rest.And = dedupeTests(rest.And) // the same test on both sides is one test (two path patterns are not expressible)
	for i, narrowed := range narrowings(&rest) {
		rule, err := compileConjunction(narrowed, field.NewPath("spec", "match").Index(0), newBounds())
		switch {
		case err == nil && rule != nil:
			return true
		case err == nil && i == 0:
			return false // the tests themselves accept no request
		}
	}
	return false
}

// narrowings returns c, then narrower forms of it that native rules can express where c
// cannot: a request they accept is one c accepts, so a non-empty one proves an overlap (and an
// empty one proves nothing). They add, alone or together: the subresource "" where the resource is tested and the subresource
// is not, a resource no test names where the subresource is tested (native rules name both),
// and the verbs that pass c's verb tests, listed, for resource requests (a verb negation leaves
// "", which only the native "*" accepts) or for non-resource ones (whose HTTP methods are
// unbounded; native rules list get, patch and delete).
func narrowings(c *flowv1.Conjunction) []*flowv1.Conjunction {
	listsResource := slices.ContainsFunc(c.And, func(t flowv1.AtomicTest) bool {
		return testField(&t) == flowv1.FieldResource && !isAnyResource(&t)
	})
	subresource := listsResource && !tests(c, flowv1.FieldSubresource)
	resource := tests(c, flowv1.FieldSubresource) && !listsResource
	verbs := [][]flowv1.AtomicTest{nil}
	if !tests(c, flowv1.FieldPath) {
		if vs := passingVerbs(c, nativeVerbs); len(vs) > 0 {
			verbs = append(verbs, []flowv1.AtomicTest{{InSet: &flowv1.SetTest{Field: flowv1.FieldVerb, Set: vs}},
				anyResource})
		}
	}
	if !tests(c, flowv1.FieldResource) && !tests(c, flowv1.FieldSubresource) {
		if vs := passingVerbs(c, []string{"get", "patch", "delete"}); len(vs) > 0 {
			verbs = append(verbs, []flowv1.AtomicTest{{InSet: &flowv1.SetTest{Field: flowv1.FieldVerb, Set: vs}},
				{PatternMatch: &flowv1.PatternTest{Field: flowv1.FieldPath, Pattern: ".*"}}})
		}
	}
	var out []*flowv1.Conjunction
	for _, verb := range verbs {
		for mask := 0; mask < 4; mask++ {
			addSub, addRes := mask&1 != 0, mask&2 != 0
			if (addSub && !subresource) || (addRes && !resource) {
				continue
			}
			narrow := &flowv1.Conjunction{And: append(append([]flowv1.AtomicTest(nil), c.And...), verb...)}
			if addSub {
				narrow.And = append(narrow.And, flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: flowv1.FieldSubresource}})
			}
			if addRes {
				narrow.And = append(narrow.And, flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: flowv1.FieldResource, Value: overlapWitness}})
			}
			out = append(out, narrow)
		}
	}
	return out
}

// anyResource is the test a positive name test implies: a resource request.
var anyResource = flowv1.AtomicTest{PatternMatch: &flowv1.PatternTest{Field: flowv1.FieldResource, Pattern: ".*"}}

func isAnyResource(t *flowv1.AtomicTest) bool { return equality.Semantic.DeepEqual(*t, anyResource) }

// passingVerbs returns the candidates that pass every verb test of c.
func passingVerbs(c *flowv1.Conjunction, candidates []string) []string {
	b := newBounds()
	var ts []*test
	for i := range c.And {
		if t := newTest(&c.And[i], field.NewPath("spec"), b); t.field == flowv1.FieldVerb {
			ts = append(ts, &t)
		}
	}
	set, err := constrain(ts, candidates)
	if err != nil {
		return nil
	}
	if set.all {
		return candidates
	}
	var out []string
	for _, v := range set.values {
		if slices.Contains(candidates, v) {
			out = append(out, v)
		}
	}
	return out
}

// satisfiableApart decides whether some value passes every test of one independent field: it
// evaluates them (as the projection does) on the values they list and a witness. With a listed
// positive set the answer is exact either way; otherwise only a value found decides.
func satisfiableApart(in []flowv1.AtomicTest, b *bounds) (satisfiable, decided bool) {
	domain := []string{overlapWitness}
	var ts []*test
	for i := range in {
		t := newTest(&in[i], field.NewPath("spec"), b)
		if !t.isPattern {
			domain = append(domain, t.values...)
		}
		ts = append(ts, &t)
	}
	set, err := constrain(ts, domain)
	switch {
	case err != nil:
		return false, false
	case !set.empty():
		return true, true
	}
	return false, hasListedPositive(ts)
}

func hasListedPositive(ts []*test) bool {
	for _, t := range ts {
		if lang, ok := t.language(); ok && lang.finite && !t.negate {
			return true
		}
	}
	return false
}

func hasPositiveTest(in []flowv1.AtomicTest) bool {
	for i := range in {
		if t := readTest(&in[i], field.NewPath("spec")); !t.negate {
			return true
		}
	}
	return false
}

// tests reports whether c tests field f.
func tests(c *flowv1.Conjunction, f flowv1.RequestField) bool {
	for i := range c.And {
		if testField(&c.And[i]) == f {
			return true
		}
	}
	return false
}

func testField(t *flowv1.AtomicTest) flowv1.RequestField {
	return readTest(t, field.NewPath("spec")).field
}

// subset reports whether every element of s is in of.
func subset(s, of []string) bool {
	in := make(map[string]bool, len(of))
	for _, v := range of {
		in[v] = true
	}
	for _, v := range s {
		if !in[v] {
			return false
		}
	}
	return true
}

// dedupeTests drops the tests equal to an earlier one.
func dedupeTests(in []flowv1.AtomicTest) []flowv1.AtomicTest {
	var out []flowv1.AtomicTest
	for _, t := range in {
		if !slices.ContainsFunc(out, func(o flowv1.AtomicTest) bool { return equality.Semantic.DeepEqual(o, t) }) {
			out = append(out, t)
		}
	}
	return out
}
