package explain

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// WriteText prints the explanation as aligned lines.
func (e *Explanation) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s:\t%s\n", k, fmt.Sprintf(format, args...)) }
	line("Request", "%s", describe(&e.Request))
	switch {
	case e.Backstop && e.RequestPriority.Exempt:
		line("FlowSchema", "%s (implicit: system:masters goes to the exempt level ahead of every FlowSchema)", e.FlowSchema)
	case e.Backstop:
		line("FlowSchema", "%s (backstop: no FlowSchema matched)", e.FlowSchema)
	default:
		line("FlowSchema", "%s, conjunction #%d matched", e.FlowSchema, e.Conjunction)
	}
	line("RequestPriority", "%s", e.RequestPriority.describe())
	line("Width", "%d (%s)", e.Width, map[bool]string{true: "read-only", false: "mutating"}[e.Width == 1])
	switch {
	case e.LongRunning:
		line("Flow control", "none: long-running requests are not flow-controlled")
	case e.RequestPriority.Exempt:
		line("Flow control", "none: exempt level, never queued or limited")
	default:
		line("Distinguisher", "%q", e.Distinguisher)
		line("Flow hash", "%s", e.FlowHash)
		line("Hand", "queues %v of %d per width (the request joins the shortest)", e.Hand, e.RequestPriority.QueuesPerWidth)
	}
	if e.Native != nil {
		line("kube-apiserver", "%s", e.Native.describe())
	}
	return tw.Flush()
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

func describe(a *request.Attributes) string {
	parts := []string{"user=" + a.User}
	if len(a.Groups) > 0 {
		parts = append(parts, "groups="+strings.Join(a.Groups, ","))
	}
	parts = append(parts, "verb="+a.Verb)
	if !a.ResourceRequest {
		return strings.Join(append(parts, "path="+a.Path), " ")
	}
	for _, kv := range [][2]string{{"apiGroup", a.APIGroup}, {"resource", a.Resource},
		{"subresource", a.Subresource}, {"namespace", a.Namespace}, {"name", a.Name}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(parts, " ")
}
