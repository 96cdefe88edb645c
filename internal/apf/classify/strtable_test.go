package classify

import (
	"fmt"
	"slices"
	"testing"
)

// TestStringTableFindsEveryKey: every key maps to its own list, whatever the table's size;
// values that are not keys (prefixes, extensions, the empty string) map to nil.
func TestStringTableFindsEveryKey(t *testing.T) {
	for _, n := range []int{1, 2, 9, 100, 1000, 5000} {
		m := make(map[string][]uint32, n)
		for k := range n {
			m[fmt.Sprintf("user-%d", k)] = []uint32{uint32(k), uint32(k + n)}
		}
		if n > 2 {
			m[""] = []uint32{7} // the empty string can be configured (for example, no namespace)
		}
		table := newStringTable(m)
		if len(table.slots) < 4*len(m) {
			t.Fatalf("n=%d: %d slots for %d keys", n, len(table.slots), len(m))
		}
		for k, want := range m {
			if got := table.get(k); !slices.Equal(got, want) {
				t.Fatalf("n=%d: get(%q) = %v, want %v", n, k, got, want)
			}
		}
		for _, v := range []string{"user-", "user-1x", "x", fmt.Sprintf("user-%d", n), "USER-1"} {
			if got := table.get(v); got != nil {
				t.Fatalf("n=%d: get(%q) = %v, want nil", n, v, got)
			}
		}
		if n <= 2 {
			if got := table.get(""); got != nil {
				t.Fatalf("n=%d: get(\"\") = %v, want nil", n, got)
			}
		}
	}
}
