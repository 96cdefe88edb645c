package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// goal is a target of issues 5 and 14 for ours in one metric.
type goal struct {
	text string
	// check returns whether the goal is met, and false for ok when the data is missing.
	check func(c *Case, unit string) (met, ok bool)
}

// ratioAtMost: ours/other <= limit.
func ratioAtMost(other string, limit float64) goal {
	return goal{
		text: fmt.Sprintf("<= %gx %s", limit, other),
		check: func(c *Case, unit string) (bool, bool) {
			r, ok := ratio(c, unit, other)
			return ok && r <= limit, ok
		},
	}
}

// ratioAtLeast: ours/other >= limit.
func ratioAtLeast(other string, limit float64) goal {
	return goal{
		text: fmt.Sprintf(">= %gx %s", limit, other),
		check: func(c *Case, unit string) (bool, bool) {
			r, ok := ratio(c, unit, other)
			return ok && r >= limit, ok
		},
	}
}

// oursAtMost: ours <= limit.
func oursAtMost(limit float64) goal {
	return goal{
		text: fmt.Sprintf("<= %g", limit),
		check: func(c *Case, unit string) (bool, bool) {
			v, ok := c.Value(implOurs, unit)
			return ok && v <= limit, ok
		},
	}
}

// row is one metric of a benchmark, with the goals ours must meet in it.
type row struct {
	unit  string
	goals []goal
}

// benchOrder lists the benchmarks in table order; rows lists which metrics each shows (the
// scenario benchmarks' ns/op, B/op and allocs/op are per whole scenario, so they are left out).
var (
	benchOrder = []string{"Uncontended", "Contended", "Fairness", "FairnessLockstep", "LightWait", "Borrowing"}
	scenario   = []row{{unit: "light-p50-ms"}, {unit: "light-p99-ms"}, {unit: "light-rejects"}, {unit: "heavy-share"},
		{unit: "heavy-fair-share"}, {unit: "req/s"}, {unit: "peak-exec"}}
	rows = map[string][]row{
		"Uncontended": {
			{unit: "ns/op", goals: []goal{ratioAtMost(implUpstream, 0.5), ratioAtMost(implSemaphore, semaphoreLimit)}},
			{unit: "B/op"},
			{unit: "allocs/op", goals: []goal{oursAtMost(0)}},
		},
		"Contended": {
			{unit: "ns/op"},
			{unit: "req/s", goals: []goal{ratioAtLeast(implUpstream, 100)}},
			{unit: "B/op"},
			{unit: "allocs/op", goals: []goal{oursAtMost(0)}},
		},
		"Fairness":         append([]row{{unit: "fairness-err", goals: []goal{oursAtMost(0.01)}}}, scenario...),
		"FairnessLockstep": append([]row{{unit: "fairness-err"}}, scenario...),
		"LightWait":        append([]row{{unit: "fairness-err"}}, scenario...),
		"Borrowing": {{unit: "borrower-seats"}, {unit: "lender-seats"}, {unit: "borrower-share"}, {unit: "light-p99-ms"},
			{unit: "light-rejects"}, {unit: "req/s"}, {unit: "peak-exec"}},
	}
)

// perSchemaLimit is the goal for ours' classification cost growth: ns/op added per added
// FlowSchema, between the fewest and the most FlowSchemas measured. A classifier that scans
// the schemas pays at least a few ns for each schema it passes, and in this workload it
// passes half of them on average, so a scan costs well over 1 ns per schema (upstream's about
// 25); an indexed classifier's cost stays nearly flat.
const perSchemaLimit = 1.0

// table accumulates the output rows and the goal tally.
type table struct {
	lines    []string
	met, all int
	notMet   []string
}

func (t *table) add(cells ...string) {
	t.lines = append(t.lines, "| "+strings.Join(cells, " | ")+" |")
}

// goalCell evaluates goals and returns the goal column's text.
func (t *table) goalCell(caseName, metric string, goals []goal, c *Case, unit string) string {
	var out []string
	for _, g := range goals {
		met, ok := g.check(c, unit)
		t.all++
		switch {
		case !ok:
			out = append(out, g.text+": NO DATA")
			t.notMet = append(t.notMet, fmt.Sprintf("%s %s %s (no data)", caseName, metric, g.text))
		case met:
			t.met++
			out = append(out, g.text+": met")
		default:
			out = append(out, g.text+": NOT MET")
			t.notMet = append(t.notMet, fmt.Sprintf("%s %s %s", caseName, metric, g.text))
		}
	}
	return strings.Join(out, "; ")
}

// Render writes the table of results.
func Render(w io.Writer, res *Results) error {
	t := &table{}
	t.add("case", "metric", implOurs, implUpstream, implSemaphore, "ours/upstream", "ours/semaphore", "goal (ours)")
	t.add("---", "---", "---:", "---:", "---:", "---:", "---:", "---")
	for _, c := range orderedCases(res) {
		name := c.Name()
		for _, r := range rowsFor(c) {
			if !c.measured(r.unit) {
				continue
			}
			r1, ok1 := ratio(c, r.unit, implUpstream)
			r2, ok2 := ratio(c, r.unit, implSemaphore)
			t.add(name, r.unit, value(c, implOurs, r.unit), value(c, implUpstream, r.unit), value(c, implSemaphore, r.unit),
				ratioText(r1, ok1), ratioText(r2, ok2), t.goalCell(name, r.unit, r.goals, c, r.unit))
			name = ""
		}
	}
	addSublinearRows(t, res)
	_, err := fmt.Fprintf(w, "Flow-control request path: ours (internal/apf) vs upstream (k8s.io/apiserver APF) vs "+
		"semaphore (the floor); median of %d run(s) per value.\n%s\n%s\n\nGoals met: %d of %d.\n",
		maxRuns(res), machineLine(res), strings.Join(t.lines, "\n"), t.met, t.all)
	if err == nil && len(t.notMet) > 0 {
		_, err = fmt.Fprintf(w, "Not met: %s.\n", strings.Join(t.notMet, "; "))
	}
	if err == nil {
		err = renderPerRun(w, res)
	}
	return err
}

// machineLine names the machine the benchmarks ran on: its processor and the kernel's
// clocksource (a system clock read costs several times more with kvm-clock than with tsc).
func machineLine(res *Results) string {
	text := func(key string) string {
		if v := res.Machine[key]; len(v) > 0 {
			return strings.Join(v, ", ")
		}
		return "unknown"
	}
	return fmt.Sprintf("Machine: cpu %s; clocksource %s.\n", text("cpu"), text("clocksource"))
}

// semaphoreLimit is the goal for ours' uncontended ns/op as a multiple of the semaphore's.
const semaphoreLimit = 2

// renderPerRun writes, for each Uncontended case measured more than once for both ours and
// the semaphore, the ratio of the two in each run, pairing their samples in the order read
// (make bench runs every case once per run), and how many runs meet the goal: the medians
// above can hide a run that does not.
func renderPerRun(w io.Writer, res *Results) error {
	var lines []string
	for _, c := range res.Cases {
		ours, sem := c.Samples(implOurs, "ns/op"), c.Samples(implSemaphore, "ns/op")
		if c.Bench != "Uncontended" || len(ours) < 2 || len(ours) != len(sem) {
			continue
		}
		ratios, met := make([]string, len(ours)), 0
		for i := range ours {
			r := ours[i] / sem[i]
			ratios[i] = ratioText(r, sem[i] > 0)
			if sem[i] > 0 && r <= semaphoreLimit {
				met++
			}
		}
		lines = append(lines, fmt.Sprintf("- %s: %s (%d of %d runs <= %dx)", strings.ReplaceAll(c.Config, "/", " "),
			strings.Join(ratios, ", "), met, len(ours), semaphoreLimit))
	}
	if len(lines) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "\nUncontended ours/semaphore ns/op in each run:\n%s\n", strings.Join(lines, "\n"))
	return err
}

// addSublinearRows adds, per configuration of BenchmarkUncontended other than schemas, how
// ns/op grows from the fewest to the most FlowSchemas: per added FlowSchema (with the goal) and
// as a ratio.
func addSublinearRows(t *table, res *Results) {
	groups := map[string][]*Case{}
	var order []string
	for _, c := range res.Cases {
		if c.Bench != "Uncontended" || schemasOf(c) < 0 {
			continue
		}
		rest := withoutSchemas(c.Config)
		if _, seen := groups[rest]; !seen {
			order = append(order, rest)
		}
		groups[rest] = append(groups[rest], c)
	}
	bySchemas := func(a, b *Case) int { return schemasOf(a) - schemasOf(b) }
	for _, rest := range order {
		few, many := slices.MinFunc(groups[rest], bySchemas), slices.MaxFunc(groups[rest], bySchemas)
		if few == many {
			continue
		}
		name := fmt.Sprintf("Classification schemas=%d vs %d %s", schemasOf(many), schemasOf(few), strings.ReplaceAll(rest, "/", " "))
		added := float64(schemasOf(many) - schemasOf(few))
		perSchema := []string{name, "ns/op per added FlowSchema"}
		ratios := []string{"", "ns/op ratio"}
		var oursPerSchema float64
		oursOK := false
		for _, impl := range []string{implOurs, implUpstream, implSemaphore} {
			a, okA := many.Value(impl, "ns/op")
			b, okB := few.Value(impl, "ns/op")
			if !okA || !okB || b == 0 {
				perSchema, ratios = append(perSchema, "-"), append(ratios, "-")
				continue
			}
			perSchema = append(perSchema, formatNumber((a-b)/added))
			ratios = append(ratios, ratioText(a/b, true))
			if impl == implOurs {
				oursPerSchema, oursOK = (a-b)/added, true
			}
		}
		text := fmt.Sprintf("<= %g (sublinear)", perSchemaLimit)
		t.all++
		var mark string
		switch {
		case !oursOK:
			mark = text + ": NO DATA"
			t.notMet = append(t.notMet, name+" "+text+" (no data)")
		case oursPerSchema <= perSchemaLimit:
			t.met++
			mark = text + ": met"
		default:
			mark = text + ": NOT MET"
			t.notMet = append(t.notMet, name+" ns/op per added FlowSchema "+text)
		}
		t.add(append(perSchema, "-", "-", mark)...)
		t.add(append(ratios, "-", "-", "")...)
	}
}

// schemasOf returns the schemas= value of c's config, or -1.
func schemasOf(c *Case) int {
	for _, kv := range strings.Split(c.Config, "/") {
		if v, ok := strings.CutPrefix(kv, "schemas="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return -1
}

func withoutSchemas(config string) string {
	parts := slices.DeleteFunc(strings.Split(config, "/"), func(kv string) bool { return strings.HasPrefix(kv, "schemas=") })
	return strings.Join(parts, "/")
}

// orderedCases returns the known benchmarks in benchOrder, then any others, each in input order.
func orderedCases(res *Results) []*Case {
	rank := func(c *Case) int {
		if i := slices.Index(benchOrder, c.Bench); i >= 0 {
			return i
		}
		return len(benchOrder)
	}
	out := slices.Clone(res.Cases)
	slices.SortStableFunc(out, func(a, b *Case) int { return rank(a) - rank(b) })
	return out
}

// rowsFor returns the rows of c's benchmark, or one row per measured unit for an unknown one.
func rowsFor(c *Case) []row {
	if r, ok := rows[c.Bench]; ok {
		return r
	}
	var out []row
	for _, u := range c.Units() {
		out = append(out, row{unit: u})
	}
	return out
}

func (c *Case) measured(unit string) bool {
	for _, impl := range []string{implOurs, implUpstream, implSemaphore} {
		if _, ok := c.Value(impl, unit); ok {
			return true
		}
	}
	return false
}

func maxRuns(res *Results) int {
	n := 0
	for _, c := range res.Cases {
		for _, units := range c.samples {
			for _, s := range units {
				n = max(n, len(s))
			}
		}
	}
	return n
}

// ratio returns ours/other in unit.
func ratio(c *Case, unit, other string) (float64, bool) {
	a, okA := c.Value(implOurs, unit)
	b, okB := c.Value(other, unit)
	if !okA || !okB {
		return 0, false
	}
	if b == 0 {
		if a == 0 {
			return 1, true
		}
		return math.Inf(1), true
	}
	return a / b, true
}

func value(c *Case, impl, unit string) string {
	v, ok := c.Value(impl, unit)
	if !ok {
		return "-"
	}
	return formatNumber(v)
}

func ratioText(r float64, ok bool) string {
	switch {
	case !ok:
		return "-"
	case math.IsInf(r, 1):
		return "inf"
	}
	return strconv.FormatFloat(r, 'g', 3, 64) + "x"
}

// formatNumber prints v with three significant digits, and values from 100 up as whole
// numbers with thousands separators.
func formatNumber(v float64) string {
	if math.Abs(v) < 99.95 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
