package classify

import "github.com/apf-operator/apf-operator/internal/apf/shufflesharding"

// stringTable maps strings to conjunction lists: the form of a valueIndex with many values
// (user names, namespaces). It is built once per configuration and only read afterwards.
//
// Keys are hashed with shufflesharding.StringHash, the hash flow hashes are made of, so that a
// request whose user is both looked up and its flow distinguisher is hashed once.
//
// It is an open-addressing table rather than a Go map because the lookup is on every request
// and, with a thousand user names, a map lookup cost about a fifth of the request path in
// profiles (its directory, control words, slots and key bytes are four places to fetch). Here
// a probe reads one slot, which keeps the key's 64-bit hash beside it, and touches the key's
// bytes (all keys share one array) only when the hashes agree. The keys come from the
// configuration, not from requests, and the table is at most half full, so no request value
// makes a probe long.
type stringTable struct {
	slots []stringSlot // len is a power of two, at least twice the number of keys
	mask  uint64
}

type stringSlot struct {
	hash uint64
	key  string
	ids  []uint32 // nil in an empty slot; never empty in a full one
}

// newStringTable returns the table of m, whose lists are not empty.
func newStringTable(m map[string][]uint32) stringTable {
	size := 2
	for size < 2*len(m) {
		size *= 2
	}
	t := stringTable{slots: make([]stringSlot, size), mask: uint64(size - 1)}
	keys := make([]byte, 0, keyBytes(m))
	for k, ids := range m {
		start := len(keys)
		keys = append(keys, k...)
		h := shufflesharding.StringHash(k)
		i := h & t.mask
		for t.slots[i].ids != nil {
			i = (i + 1) & t.mask
		}
		t.slots[i] = stringSlot{hash: h, key: string(keys[start:]), ids: ids}
	}
	return t
}

// keyBytes returns the total length of m's keys.
func keyBytes(m map[string][]uint32) int {
	n := 0
	for k := range m {
		n += len(k)
	}
	return n
}

// get returns the list filed under v, or nil.
func (t *stringTable) get(v string) []uint32 { return t.getHashed(v, shufflesharding.StringHash(v)) }

// getHashed is get for a caller that has v's StringHash h.
func (t *stringTable) getHashed(v string, h uint64) []uint32 {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		if sl.ids == nil {
			return nil // the table is never full, so every probe ends
		}
		if sl.hash == h && sl.key == v {
			return sl.ids
		}
	}
}
