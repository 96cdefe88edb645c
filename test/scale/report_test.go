package scale

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/apf-operator/apf-operator/internal/native"
)

// objectWrites are the operator's writes per object of the load: its status writes and the
// writes of the native object projected from it.
type objectWrites struct {
	// byObject holds each object's status and native writes.
	byObject map[string][2]int
	// status and native are the totals and the maxima per object, by kind.
	status, native kindCounts
	// backstop counts the writes of native objects of no object of the load (the backstops).
	backstop int
}

// kindCounts are a total and maxima per object, for RequestPriorities and FlowSchemas.
type kindCounts struct {
	total, maxRP, maxFS int
}

func perObject(l load, c *writeCounts) objectWrites {
	w := objectWrites{byObject: make(map[string][2]int, l.rps+l.fss)}
	for i := range l.rps {
		st, nat := c.status["requestpriorities/"+rpName(i)], c.native["prioritylevelconfigurations/"+native.NativeName(rpName(i))]
		w.byObject["RequestPriority "+rpName(i)] = [2]int{st, nat}
		w.status.total, w.status.maxRP = w.status.total+st, max(w.status.maxRP, st)
		w.native.total, w.native.maxRP = w.native.total+nat, max(w.native.maxRP, nat)
	}
	for i := range l.fss {
		st, nat := c.status["flowschemas/"+fsName(i)], c.native["flowschemas/"+native.NativeName(fsName(i))]
		w.byObject["FlowSchema "+fsName(i)] = [2]int{st, nat}
		w.status.total, w.status.maxFS = w.status.total+st, max(w.status.maxFS, st)
		w.native.total, w.native.maxFS = w.native.total+nat, max(w.native.maxFS, nat)
	}
	for _, n := range c.native {
		w.backstop += n
	}
	w.backstop -= w.native.total
	return w
}

// over lists the objects with more than n writes, sorted, with their status and native writes.
func (w objectWrites) over(n int) []string {
	var out []string
	for name, c := range w.byObject {
		if c[0]+c[1] > n {
			out = append(out, fmt.Sprintf("%s (%d status, %d native)", name, c[0], c[1]))
		}
	}
	slices.Sort(out)
	return out
}

// figures are what the scale test measured.
type figures struct {
	load    load
	applied time.Duration
	// converged is when the last status or native write completed (audit log); polled, when
	// the convergence poll, which pages through every object, saw it.
	converged, polled time.Duration
	writes            objectWrites
	counts            *writeCounts
	heap, rss         uint64
	// measured names the process whose heap and RSS these are.
	measured    string
	latency     latencyFigures
	snapshots   uint64
	computing   time.Duration
	machineLoad string
	// eventReasons counts the events in the cluster by reason.
	eventReasons map[string]int
}

// report prints the figures as a table, each beside its goal.
func report(out io.Writer, f figures) {
	objects := f.load.rps + f.load.fss
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintf(tw, "Scale: %d RequestPriorities + %d FlowSchemas, %d appliers, GOMAXPROCS %d\n",
		f.load.rps, f.load.fss, *appliers, runtime.GOMAXPROCS(0))
	_, _ = fmt.Fprintf(tw, "Machine load average (1 min) at start / at convergence: %s\n", f.machineLoad)
	_, _ = fmt.Fprintln(tw, "figure\tmeasured\tgoal")
	row := func(name, measured, goal string) { _, _ = fmt.Fprintf(tw, "%s\t%s\t%s\n", name, measured, goal) }
	row("apply (all creations admitted)", f.applied.Round(100*time.Millisecond).String(), "")
	row("time to converge (last operator write)", f.converged.Round(100*time.Millisecond).String(), "< 2m0s")
	row("  convergence seen by the poll", f.polled.Round(100*time.Millisecond).String(), "")
	total := f.writes.status.total + f.writes.native.total
	row("operator writes per object (mean)", fmt.Sprintf("%.2f", float64(total)/float64(objects)), "≤ 2")
	row("  status writes: mean / max RP / max FS", fmt.Sprintf("%.2f / %d / %d",
		float64(f.writes.status.total)/float64(objects), f.writes.status.maxRP, f.writes.status.maxFS), "")
	row("  native writes: mean / max RP / max FS", fmt.Sprintf("%.2f / %d / %d",
		float64(f.writes.native.total)/float64(objects), f.writes.native.maxRP, f.writes.native.maxFS), "")
	row("  backstop native writes", fmt.Sprint(f.writes.backstop), "")
	row("  events per object", fmt.Sprintf("%.2f", float64(f.counts.events)/float64(objects)), "")
	row("  events by reason", fmt.Sprint(f.eventReasons), "")
	row("  refused writes (conflicts)", fmt.Sprint(f.counts.failed), "")
	row("snapshots computed (time spent)", fmt.Sprintf("%d (%s)", f.snapshots, f.computing.Round(10*time.Millisecond)), "")
	row("peak heap ("+f.measured+")", mib(f.heap), "≤ 300 MiB")
	row("peak RSS ("+f.measured+")", mib(f.rss), "")
	row("webhook p50", f.latency.p50.Round(10*time.Microsecond).String(), "")
	row("webhook p99", fmt.Sprintf("%s over %d requests (%s)", f.latency.p99.Round(10*time.Microsecond),
		f.latency.requests, f.latency.resolution), "< 5ms")
	row("  admissions within 5 ms", fmt.Sprintf("%.2f%%", 100*f.latency.within5ms), "≥ 99%")
	_ = tw.Flush()
}

func mib(b uint64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
