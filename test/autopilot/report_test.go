package autopilot_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// logFigures logs the runs' figures as Markdown tables (docs/autopilot-live.md copies them).
func logFigures(t *testing.T, static, auto run, samples []sample) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "\n| level | run | dispatched | rejected | p99 wait of executed (s) | 429s seen by the client |\n|---|---|---:|---:|---:|---:|\n")
	for _, tn := range tenants {
		for _, r := range []run{static, auto} {
			l := r.levels[nativeLevel(tn.name)]
			fmt.Fprintf(&b, "| %s | %s | %.0f | %.0f | %.3f | %d |\n", nativeLevel(tn.name), r.name, l.Dispatched, l.Rejected, l.WaitP99, r.clients[tn.name].Rejected)
		}
	}
	s, a := poolRejected(static), poolRejected(auto)
	fmt.Fprintf(&b, "\npool rejections: static %.0f, autopilot %.0f (%.0f%% fewer); runs %s and %s\n",
		s, a, 100*(1-a/max(s, 1)), static.end.Sub(static.start).Round(time.Second), auto.end.Sub(auto.start).Round(time.Second))
	b.WriteString(waitBuckets(static, auto))
	b.WriteString(sharesTimeline(auto, samples))
	b.WriteString(outsideSeats(samples))
	t.Log(b.String())
}

// sharesTimeline lists the pool's native shares and nominal seats whenever they changed
// during the autopilot run, at seconds since its start.
func sharesTimeline(auto run, samples []sample) string {
	var b strings.Builder
	b.WriteString("\n| t (s) |")
	for _, tn := range tenants {
		fmt.Fprintf(&b, " %s shares (seats) |", tn.name)
	}
	b.WriteString("\n|---:|" + strings.Repeat("---:|", len(tenants)) + "\n")
	last := ""
	for _, s := range samples {
		if s.at.Before(auto.start) || s.at.After(auto.end) {
			continue
		}
		var row strings.Builder
		for _, tn := range tenants {
			fmt.Fprintf(&row, " %d (%.0f) |", s.shares[tn.name], s.nominal[nativeLevel(tn.name)])
		}
		if row.String() != last {
			fmt.Fprintf(&b, "| %.0f |%s\n", s.at.Sub(auto.start).Seconds(), row.String())
			last = row.String()
		}
	}
	return b.String()
}

// outsideSeats lists the nominal seats of the levels outside the pool at the first sample.
func outsideSeats(samples []sample) string {
	if len(samples) == 0 {
		return ""
	}
	first := samples[0]
	parts := make([]string, 0, len(first.nominal))
	for _, level := range outsidePool(first.nominal) {
		parts = append(parts, fmt.Sprintf("%s %.0f", level, first.nominal[level]))
	}
	pool := make([]string, 0, len(tenants))
	for _, name := range slices.Sorted(maps.Keys(first.shares)) {
		pool = append(pool, fmt.Sprintf("%s %d", name, first.shares[name]))
	}
	return fmt.Sprintf("\nnominal seats outside the pool (%d samples, %s..%s): %s\npool shares at the first sample: %s\n",
		len(samples), first.at.Format(time.TimeOnly), samples[len(samples)-1].at.Format(time.TimeOnly),
		strings.Join(parts, ", "), strings.Join(pool, ", "))
}

// waitBuckets lists how many executed requests of each pool level waited within each bucket of
// kube-apiserver's histogram (not cumulative), the resolution the p99 is interpolated from.
func waitBuckets(static, auto run) string {
	var b strings.Builder
	b.WriteString("\nexecuted requests by queue wait (s), per bucket of request_wait_duration_seconds:\n")
	for _, tn := range tenants {
		for _, r := range []run{static, auto} {
			h := r.levels[nativeLevel(tn.name)].Wait
			fmt.Fprintf(&b, "%s %s:", nativeLevel(tn.name), r.name)
			below, lower := 0.0, 0.0
			for i, bound := range h.Bounds {
				switch n := h.Counts[i] - below; {
				case n > 0 && bound == 0:
					fmt.Fprintf(&b, " 0: %.0f;", n)
				case n > 0:
					fmt.Fprintf(&b, " (%g, %g]: %.0f;", lower, bound, n)
				}
				below, lower = h.Counts[i], bound
			}
			if n := h.Count - below; n > 0 {
				fmt.Fprintf(&b, " above %g: %.0f;", lower, n)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
