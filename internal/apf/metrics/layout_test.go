package metrics

import (
	"testing"
	"unsafe"
)

// TestFlowRequestPathFitsACacheLine: what an uncontended request reads and writes of its Flow
// (the holders, both sums and the first bucket of both histograms) lies in its first 64
// bytes, and Flows are allocated at multiples of 64 bytes (their size class is).
func TestFlowRequestPathFitsACacheLine(t *testing.T) {
	var f Flow
	end := unsafe.Offsetof(f.guarded) + unsafe.Offsetof(f.guarded.buckets) + unsafe.Sizeof(f.guarded.buckets[0])
	if end > 64 {
		t.Errorf("the request path's fields end at byte %d of a Flow, want at most 64", end)
	}
	flows := make([]*Flow, 64)
	for i := range flows {
		flows[i] = &Flow{}
		if addr := uintptr(unsafe.Pointer(flows[i])); addr%64 != 0 {
			t.Fatalf("a Flow (%d bytes) was allocated at %#x, not at a multiple of 64", unsafe.Sizeof(f), addr)
		}
	}
}
