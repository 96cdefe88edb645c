package classify

import (
	"testing"
	"unsafe"
)

// TestConjunctionFitsACacheLine: Classify reads all of a matching conjunction; 64 bytes is
// one cache line (see the conjunction type).
func TestConjunctionFitsACacheLine(t *testing.T) {
	if size := unsafe.Sizeof(conjunction{}); size != 64 {
		t.Fatalf("a conjunction is %d bytes, want 64", size)
	}
}
