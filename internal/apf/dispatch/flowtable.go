package dispatch

import (
	"unsafe"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// flowTable maps the schemas of one configuration to their flows. It is built once, before
// the configuration is published, and only read afterwards, so readers take no lock.
//
// It is an open-addressing table keyed by the schema's address: every request looks its
// schema up, and a Go map with pointer keys costs 10 to 15 ns there (hashing with the
// per-map seed, control-byte matching), against 2 to 3 ns for a multiplicative hash of the
// address and a short linear probe. The address only chooses where to start probing; a slot
// matches by pointer comparison, and the table holds the schema pointers, so the garbage
// collector (which does not move heap objects) keeps them valid.
type flowTable struct {
	slots []flowSlot // len is a power of two, at least twice the number of entries
	shift uint       // 64 - log2(len(slots))
}

// flowSlot holds its flow by value: a request reads the flow right after finding the slot,
// and one cache line less to fetch shows at a thousand schemas.
type flowSlot struct {
	schema *effective.Schema
	flow   flow
}

// newFlowTable returns a table sized for n entries.
func newFlowTable(n int) flowTable {
	size, bits := 2, uint(1)
	for size < 2*n {
		size, bits = size*2, bits+1
	}
	return flowTable{slots: make([]flowSlot, size), shift: 64 - bits}
}

// start is the slot where the probe for s begins: Fibonacci hashing of its address.
func (t *flowTable) start(s *effective.Schema) uint64 {
	return uint64(uintptr(unsafe.Pointer(s))) * 0x9E3779B97F4A7C15 >> t.shift
}

// put adds or replaces the flow of s (non-nil), copying f; only the builder calls it.
func (t *flowTable) put(s *effective.Schema, f *flow) {
	mask := uint64(len(t.slots) - 1)
	for i := t.start(s); ; i = (i + 1) & mask {
		if sl := &t.slots[i]; sl.schema == nil || sl.schema == s {
			sl.schema, sl.flow = s, *f
			return
		}
	}
}

// get returns the flow of s, or nil.
func (t *flowTable) get(s *effective.Schema) *flow {
	if s == nil {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	for i := t.start(s); ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if sl.schema == s {
			return &sl.flow
		}
		if sl.schema == nil {
			return nil // the table is never full, so every probe ends
		}
	}
}
