package main

import (
	"fmt"
	"sort"
	"time"
)

// timedTest is a top-level test and how long it ran.
type timedTest struct {
	key     skipKey
	elapsed float64
}

// endedAt says when, after the run's first event, e ended (" (ended at 4m12s)"), so that a
// log shows which package held the run's end; empty when the events carry no time.
func (r *report) endedAt(e event) string {
	if e.Time.IsZero() || r.first.IsZero() {
		return ""
	}
	return fmt.Sprintf(" (ended at %s)", e.Time.Sub(r.first).Round(time.Second))
}

// printSlowest lists the slowestN top-level tests that ran longest, longest first.
func (r *report) printSlowest() {
	if r.slowestN <= 0 || len(r.slowest) == 0 {
		return
	}
	sort.SliceStable(r.slowest, func(i, j int) bool { return r.slowest[i].elapsed > r.slowest[j].elapsed })
	n := min(r.slowestN, len(r.slowest))
	fmt.Fprintf(r.out, "\nslowest tests (%d of %d):\n", n, len(r.slowest))
	for _, t := range r.slowest[:n] {
		fmt.Fprintf(r.out, "  %6.1fs %s\n", t.elapsed, t.key)
	}
}
