package classify

import (
	"math"
	"slices"

	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/apf/shufflesharding"
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
// a stringTable otherwise.
type valueIndex struct {
	small []indexEntry
	large stringTable // without slots when small is used
	// minID is the lowest conjunction number filed (noMatch when none): a request that already
	// matched a lower one needs no lookup here.
	minID uint32
}

type indexEntry struct {
	value string
	ids   []uint32
}

func newValueIndex(m map[string][]uint32) valueIndex {
	ix := valueIndex{minID: noMatch}
	for _, ids := range m {
		ix.minID = min(ix.minID, ids[0]) // lists are ascending and not empty
	}
	if len(m) > smallIndex {
		ix.large = newStringTable(m)
		return ix
	}
	for v, ids := range m {
		ix.small = append(ix.small, indexEntry{value: v, ids: ids})
	}
	return ix
}

// empty reports whether nothing is filed.
func (ix *valueIndex) empty() bool { return len(ix.small) == 0 && len(ix.large.slots) == 0 }

// get returns the conjunctions filed under v.
func (ix *valueIndex) get(v string) []uint32 {
	if len(ix.large.slots) > 0 {
		return ix.large.get(v)
	}
	return ix.getSmall(v)
}

// getUser is get for the user index: when it hashes the user name, it records the hash in uh.
func (ix *valueIndex) getUser(v string, uh *userHash) []uint32 {
	if len(ix.large.slots) > 0 {
		uh.h, uh.ok = shufflesharding.StringHash(v), true
		return ix.large.getHashed(v, uh.h)
	}
	return ix.getSmall(v)
}

// getSmall is get without a stringTable.
func (ix *valueIndex) getSmall(v string) []uint32 {
	for i := range ix.small {
		if ix.small[i].value == v {
			return ix.small[i].ids
		}
	}
	return nil
}

// buildIndex files each conjunction under its most selective indexable test, and drops that
// test from the conjunction's checks when the filing proves it.
func buildIndex(conjunctions []conjunction) index {
	var ix index
	var byField [numFields]map[string][]uint32
	for n := range conjunctions {
		id := uint32(n)
		cj := &conjunctions[n]
		t := bestKey(cj.checks)
		if t == nil {
			ix.always = append(ix.always, id)
			continue
		}
		cj.checks = withoutImplied(cj.checks, t)
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
	compactLists(byField)
	for f := range numFields {
		ix.byField[f] = newValueIndex(byField[f])
		if f != fieldGroups && !ix.byField[f].empty() {
			ix.scalars = append(ix.scalars, f)
		}
	}
	return ix
}

// compactLists moves every list of the maps into one array: with one list per user name, as
// many small allocations would scatter the lists over the heap, and every request reads one.
func compactLists(maps [numFields]map[string][]uint32) {
	total := 0
	for _, m := range maps {
		for _, l := range m {
			total += len(l)
		}
	}
	all := make([]uint32, 0, total)
	for _, m := range maps {
		for v, l := range m {
			start := len(all)
			all = append(all, l...)
			m[v] = all[start:len(all):len(all)]
		}
	}
}

// withoutImplied returns the tests of a conjunction filed by key minus key itself when finding
// the conjunction under its value proves key: a scalar equals or inSet (the request's value is
// the one filed under), or a superSet whose only member is the group filed under. A superSet of
// several groups must still check the others.
func withoutImplied(tests []atomicTest, key *atomicTest) []atomicTest {
	if key.op == opSuperSet && slices.ContainsFunc(key.set, func(g string) bool { return g != key.set[0] }) {
		return tests
	}
	checks := make([]atomicTest, 0, len(tests)-1)
	for i := range tests {
		if &tests[i] != key {
			checks = append(checks, tests[i])
		}
	}
	return checks
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

// noMatch is the best conjunction number before any conjunction accepted: above every number
// (addConjunction keeps them below math.MaxUint32).
const noMatch = math.MaxUint32

// userHash is the shufflesharding.StringHash of a request's user name, once match has
// computed it (ok), for the flow hash of a schema that distinguishes flows by user.
type userHash struct {
	h  uint64
	ok bool
}

// match returns the number of the first conjunction, in ascending order, that accepts a, or -1.
// It scans the candidate list of each of a's indexed values, then the always-checked list, each
// only below the best accepting number found so far: the lowest accepting number overall.
// Indexed lists go first because always-checked conjunctions are the costlier (patterns,
// negations) and a good early bound skips them. An index whose lowest number is not below
// the best so far is not looked up at all. When the user index hashes a's user, the hash is
// left in uh.
func (c *Classifier) match(a *request.Attributes, uh *userHash) int {
	best := uint32(noMatch)
	for _, f := range c.index.scalars {
		ix := &c.index.byField[f]
		if v, ok := value(a, f); ok && ix.minID < best {
			if f == fieldUser {
				best = c.firstBelow(a, ix.getUser(v, uh), best)
			} else {
				best = c.firstBelow(a, ix.get(v), best)
			}
		}
	}
	if groups := &c.index.byField[fieldGroups]; groups.minID < best {
		for _, g := range a.Groups {
			best = c.firstBelow(a, groups.get(g), best)
		}
	}
	best = c.firstBelow(a, c.index.always, best)
	if best == noMatch {
		return -1
	}
	return int(best)
}

// firstBelow returns the first number of the ascending list ids that is below best and whose
// conjunction accepts a, or best.
func (c *Classifier) firstBelow(a *request.Attributes, ids []uint32, best uint32) uint32 {
	for _, id := range ids {
		if id >= best {
			break
		}
		if c.conjunctions[id].accepts(a) {
			return id
		}
	}
	return best
}
