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
// a probe reads one 24-byte slot, which keeps the key's 64-bit hash beside it, and touches the
// key's bytes only when the hashes agree. Most requests of a large configuration look up a
// value that is not a key (a user without a FlowSchema of its own), and such a probe ends only
// at an empty slot: the table is at most a quarter full so that it usually ends at the first
// or second slot, within one cache line (at half full, with 48-byte slots, it read two or
// three lines, which cost a thousand-schema request 8 ns). The keys come from the
// configuration, not from requests, so no request value makes a probe long.
type stringTable struct {
	slots []stringSlot // len is a power of two, at least four times the number of keys
	mask  uint64
	keys  string   // every key, back to back
	ids   []uint32 // every list, back to back
}

// stringSlot locates one key and its list in the table's keys and ids.
type stringSlot struct {
	hash           uint64
	keyOff, keyLen uint32
	idsOff, idsLen uint32 // idsLen is 0 in an empty slot and never in a full one
}

// newStringTable returns the table of m, whose lists are not empty. The keys and lists of a
// configuration fit in 32-bit offsets by far (the API server bounds every object's size).
func newStringTable(m map[string][]uint32) stringTable {
	size := 2
	for size < 4*len(m) {
		size *= 2
	}
	t := stringTable{slots: make([]stringSlot, size), mask: uint64(size - 1)}
	keys := make([]byte, 0, keyBytes(m))
	ids := make([]uint32, 0, listLengths(m))
	for k, l := range m {
		sl := stringSlot{hash: shufflesharding.StringHash(k), keyOff: uint32(len(keys)), keyLen: uint32(len(k)),
			idsOff: uint32(len(ids)), idsLen: uint32(len(l))}
		keys, ids = append(keys, k...), append(ids, l...)
		i := sl.hash & t.mask
		for t.slots[i].idsLen != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = sl
	}
	t.keys, t.ids = string(keys), ids
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

// listLengths returns the total length of m's lists.
func listLengths(m map[string][]uint32) int {
	n := 0
	for _, l := range m {
		n += len(l)
	}
	return n
}

// get returns the list filed under v, or nil.
func (t *stringTable) get(v string) []uint32 { return t.getHashed(v, shufflesharding.StringHash(v)) }

// getHashed is get for a caller that has v's StringHash h.
func (t *stringTable) getHashed(v string, h uint64) []uint32 {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		if sl.idsLen == 0 {
			return nil // the table is never full, so every probe ends
		}
		if sl.hash == h && int(sl.keyLen) == len(v) && t.keys[sl.keyOff:sl.keyOff+sl.keyLen] == v {
			end := sl.idsOff + sl.idsLen
			return t.ids[sl.idsOff:end:end]
		}
	}
}
