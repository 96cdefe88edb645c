package explain

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// WriteText prints the report as aligned lines: kube-apiserver's answer first, then what the
// operator's FlowSchemas have to do with it, then (--in-process) the in-process answer.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s:\t%s\n", k, fmt.Sprintf(format, args...)) }
	line("Request", "%s", describeRequest(&r.Request))
	line("Read from", "%s (%s)", r.View, r.Mode)
	if r.Note != "" {
		line("Note", "%s", r.Note)
	}
	k := &r.KubeAPIServer
	if !k.Classified {
		line("kube-apiserver", "serves it unclassified: a long-running request (exec, attach, proxy, log, portforward) is not flow-controlled")
	} else {
		line("FlowSchema", "%s", describeSchema(k))
		line("Priority level", "%s", describeLevel(k))
		line("Nominal seats", "%s", r.describeSeats())
		line("Distinguisher", "%s", describeDistinguisher(k))
	}
	if r.Ours != nil {
		line("Operator", "%s", r.Ours.Summary)
		writeLevel(r.Ours, line)
	}
	if r.InProcess != nil {
		fmt.Fprintln(tw, "In-process classifier (the library filter, not what kube-apiserver runs):")
		r.InProcess.writeLines(line)
	}
	return tw.Flush()
}

func describeSchema(k *nativeview.Answer) string {
	s := fmt.Sprintf("%s (uid %s, matchingPrecedence %d)", k.FlowSchema.Name, uidOrNone(string(k.FlowSchema.UID)), k.Precedence)
	switch {
	case k.Fallback:
		s += ": no FlowSchema matched, kube-apiserver fell back to catch-all"
	case strings.HasPrefix(k.Source, native.KindOperator+"/"):
		s += ", the operator's own route for " + k.Source
	case k.Source != "":
		s += ", projected by the operator from " + k.Source
	}
	return s
}

func describeLevel(k *nativeview.Answer) string {
	s := fmt.Sprintf("%s (uid %s)", k.PriorityLevel.Name, uidOrNone(string(k.PriorityLevel.UID)))
	if k.Exempt {
		s += ", exempt: never queued or limited"
	}
	return s
}

func (r *Report) describeSeats() string {
	k := &r.KubeAPIServer
	switch {
	case k.Exempt:
		return "none needed (exempt)"
	case k.NominalSeats == nil:
		return "unknown: " + r.SeatsUnknown
	case k.ServerSeats > 0:
		return fmt.Sprintf("%d of the server's %d", *k.NominalSeats, k.ServerSeats)
	}
	return fmt.Sprintf("%d", *k.NominalSeats)
}

func describeDistinguisher(k *nativeview.Answer) string {
	if k.DistinguisherMethod == "" {
		return `none: the FlowSchema puts all its requests in one flow`
	}
	return fmt.Sprintf("%q (%s)", k.Distinguisher, k.DistinguisherMethod)
}

func uidOrNone(uid string) string {
	if uid == "" {
		return "none: not read from a cluster"
	}
	return uid
}

// writeLines prints the in-process answer, indented under its heading.
func (e *Explanation) writeLines(line func(k, format string, args ...any)) {
	switch {
	case e.Backstop && e.RequestPriority.Exempt:
		line("  FlowSchema", "%s (implicit: system:masters goes to the exempt level ahead of every FlowSchema)", e.FlowSchema)
	case e.Backstop:
		line("  FlowSchema", "%s (backstop: no FlowSchema matched)", e.FlowSchema)
	default:
		line("  FlowSchema", "%s, conjunction #%d matched", e.FlowSchema, e.Conjunction)
	}
	line("  RequestPriority", "%s", e.RequestPriority.describe())
	line("  Width", "%d (%s)", e.Width, map[bool]string{true: "read-only", false: "mutating"}[e.Width == 1])
	switch {
	case e.LongRunning:
		line("  Flow control", "none: long-running requests are not flow-controlled")
	case e.RequestPriority.Exempt:
		line("  Flow control", "none: exempt level, never queued or limited")
	default:
		line("  Distinguisher", "%q", e.Distinguisher)
		line("  Flow hash", "%s", e.FlowHash)
		line("  Hand", "queues %v of %d per width (the request joins the shortest)", e.Hand, e.RequestPriority.QueuesPerWidth)
	}
}

func (p PriorityInfo) describe() string {
	s := fmt.Sprintf("%s (level %d", p.Name, p.Level)
	if p.Backstop {
		s += ", backstop"
	}
	if p.Exempt {
		return s + ", exempt)"
	}
	s += fmt.Sprintf(", %d shares = %.4f of the server's concurrency, %d queues per width", p.Shares, p.AssuredFraction, p.QueuesPerWidth)
	if p.QueuesPerWidth > 1 {
		s += fmt.Sprintf(", hand %d", p.HandSize)
	}
	return s + fmt.Sprintf(", queue limit %d)", p.QueueLengthLimit)
}

// writeLevel prints the operator's RequestPriority, its binding and its native differences.
func writeLevel(o *Ours, line func(k, format string, args ...any)) {
	switch {
	case o.RequestPriority == "":
		return
	case o.BoundTo != "":
		line("Operator level", "%s, bound to the native level %s (nothing is written for it)", o.RequestPriority, o.BoundTo)
	default:
		line("Operator level", "%s", o.RequestPriority)
	}
	for _, d := range o.Differences {
		line("Differs", "%s", d)
	}
}
