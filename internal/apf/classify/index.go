package classify

import (
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// index files every conjunction, by number, under one positive equality test, or in always.
// Every list is ascending.
type index struct {
	always []uint32
	// byField[f] lists, by value v of field f, the conjunctions filed under v.
	byField [numFields]valueIndex
	// scalars are the scalar fields with a non-empty index, for the lookup loop.
	scalars []field
}

// smallIndex is the most values a valueIndex scans linearly instead of hashing: comparing a
// handful of strings (most differ in length) is cheaper than a map lookup.
const smallIndex = 8

// valueIndex lists conjunctions by value: a short list of entries when there are few values,
// a map otherwise.
type valueIndex struct {
	small []indexEntry
	large map[string][]uint32
}

type indexEntry struct {
	value string
	ids   []uint32
}

func newValueIndex(m map[string][]uint32) valueIndex {
	if len(m) > smallIndex {
		return valueIndex{large: m}
	}
	var ix valueIndex
	for v, ids := range m {
		ix.small = append(ix.small, indexEntry{value: v, ids: ids})
	}
	return ix
}

// empty reports whether nothing is filed.
func (ix *valueIndex) empty() bool { return len(ix.small) == 0 && len(ix.large) == 0 }

// get returns the conjunctions filed under v.
func (ix *valueIndex) get(v string) []uint32 {
	if ix.large != nil {
		return ix.large[v]
	}
	for i := range ix.small {
		if ix.small[i].value == v {
			return ix.small[i].ids
		}
	}
	return nil
}

// buildIndex files each conjunction under its most selective indexable test.
func buildIndex(conjunctions []conjunction) index {
	var ix index
	var byField [numFields]map[string][]uint32
	for n := range conjunctions {
		id := uint32(n)
		t := bestKey(conjunctions[n].tests)
		if t == nil {
			ix.always = append(ix.always, id)
			continue
		}
		m := byField[t.field]
		if m == nil {
			m = map[string][]uint32{}
			byField[t.field] = m
		}
		if t.op == opSuperSet {
			// Every listed group must be present, so one of them suffices: the least used.
			g := leastUsed(m, t.set)
			m[g] = appendOnce(m[g], id)
			continue
		}
		for _, v := range t.keys() {
			m[v] = appendOnce(m[v], id)
		}
	}
	for f := range numFields {
		ix.byField[f] = newValueIndex(byField[f])
		if f != fieldGroups && !ix.byField[f].empty() {
			ix.scalars = append(ix.scalars, f)
		}
	}
	return ix
}

// bestKey returns the indexable test on the most selective field (the smallest set among
// equals), or nil.
func bestKey(tests []atomicTest) *atomicTest {
	var best *atomicTest
	for i := range tests {
		t := &tests[i]
		if !t.indexable() {
			continue
		}
		if best == nil || indexPreference[t.field] < indexPreference[best.field] ||
			t.field == best.field && len(t.keys()) < len(best.keys()) {
			best = t
		}
	}
	return best
}

// leastUsed returns the member of set with the shortest list so far (the first on a tie).
func leastUsed(m map[string][]uint32, set []string) string {
	best := set[0]
	for _, g := range set[1:] {
		if len(m[g]) < len(m[best]) {
			best = g
		}
	}
	return best
}

// appendOnce appends id unless it is already last (a set listing a value twice).
func appendOnce(l []uint32, id uint32) []uint32 {
	if len(l) > 0 && l[len(l)-1] == id {
		return l
	}
	return append(l, id)
}

// stackLists is how many candidate lists match keeps on the stack.
const stackLists = 32

// match returns the number of the first conjunction, in ascending order, that accepts a, or -1.
// It merges the candidate lists of a's indexed values with the always-checked list and stops
// at the first conjunction that accepts the request.
func (c *Classifier) match(a *request.Attributes) int {
	var stack [stackLists][]uint32
	lists := stack[:0]
	if len(c.index.always) > 0 {
		lists = append(lists, c.index.always)
	}
	for _, f := range c.index.scalars {
		if v, ok := value(a, f); ok {
			if l := c.index.byField[f].get(v); len(l) > 0 {
				lists = append(lists, l)
			}
		}
	}
	if groups := &c.index.byField[fieldGroups]; !groups.empty() {
		for _, g := range a.Groups {
			if l := groups.get(g); len(l) > 0 {
				lists = append(lists, l)
			}
		}
	}
	return c.firstAccepting(a, lists)
}

// firstAccepting evaluates the candidates of the ascending lists in ascending order, each
// once, and returns the first that accepts a, or -1. It consumes lists.
func (c *Classifier) firstAccepting(a *request.Attributes, lists [][]uint32) int {
	last := int64(-1)
	for len(lists) > 0 {
		best := 0
		for i := 1; i < len(lists); i++ {
			if lists[i][0] < lists[best][0] {
				best = i
			}
		}
		id := lists[best][0]
		if rest := lists[best][1:]; len(rest) > 0 {
			lists[best] = rest
		} else {
			lists[best] = lists[len(lists)-1]
			lists = lists[:len(lists)-1]
		}
		if int64(id) == last {
			continue // the same conjunction via a repeated group
		}
		last = int64(id)
		if c.conjunctions[id].accepts(a) {
			return int(id)
		}
	}
	return -1
}
