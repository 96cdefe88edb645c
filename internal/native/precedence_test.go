package native

import (
	"slices"
	"testing"
)

func TestAssignPrecedences(t *testing.T) {
	cases := []struct {
		name     string
		previous []int32
		lo, hi   int32
		want     []int32
	}{
		{"fresh: spread evenly", []int32{0, 0, 0}, 1000, 1099, []int32{1024, 1049, 1074}},
		{"unchanged", []int32{1025, 1050, 1075}, 1000, 1099, []int32{1025, 1050, 1075}},
		{"insert between keeps the others", []int32{1025, 0, 1050, 1075}, 1000, 1099, []int32{1025, 1037, 1050, 1075}},
		{"insert first", []int32{0, 1025, 1050}, 1000, 1099, []int32{1012, 1025, 1050}},
		{"insert last", []int32{1025, 1050, 0}, 1000, 1099, []int32{1025, 1050, 1075}},
		{"out of order: the later one moves", []int32{1050, 1025}, 1000, 1099, []int32{1050, 1075}},
		{"no room between: the later one moves", []int32{1000, 0, 1001}, 1000, 1099, []int32{1000, 1033, 1066}},
		{"outside the range: moved", []int32{5, 9999}, 1000, 1099, []int32{1032, 1066}},
		{"exactly full", []int32{0, 0, 0}, 1, 3, []int32{1, 2, 3}},
		{"too many: the last get none", []int32{0, 0, 0, 0}, 1, 3, []int32{1, 2, 3}},
		{"keep respects room at the end", []int32{1099, 0}, 1000, 1099, []int32{1032, 1066}},
	}
	for _, c := range cases {
		got := assignPrecedences(c.previous, c.lo, c.hi)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: assignPrecedences(%v, %d, %d) = %v, want %v", c.name, c.previous, c.lo, c.hi, got, c.want)
		}
	}
}

// TestAssignPrecedencesProperties checks, over many random histories, that precedences are
// strictly increasing and within range, and that a kept schema keeps its precedence.
func TestAssignPrecedencesProperties(t *testing.T) {
	seed := uint64(1)
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	for trial := 0; trial < 2000; trial++ {
		lo, hi := int32(1000), int32(1000+next(60))
		prev := make([]int32, next(40))
		for i := range prev {
			if next(3) > 0 {
				prev[i] = int32(990 + next(80))
			}
		}
		got := assignPrecedences(prev, lo, hi)
		if want := min(len(prev), int(hi-lo+1)); len(got) != want {
			t.Fatalf("%v in [%d,%d]: %d precedences, want %d", prev, lo, hi, len(got), want)
		}
		for i, p := range got {
			if p < lo || p > hi || (i > 0 && p <= got[i-1]) {
				t.Fatalf("%v in [%d,%d]: got %v, not increasing within range", prev, lo, hi, got)
			}
		}
	}
}
