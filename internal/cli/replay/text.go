package replay

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
)

// textRows is how many users and namespaces the text summary lists (JSON lists all).
const textRows = 10

// WriteText writes the summary for people; every line fits 120 columns.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	r.textInput(bw)
	r.textLevels(bw)
	r.textMoves(bw)
	r.textBreakdown(bw, "USER", r.ByUser, textRows)
	r.textBreakdown(bw, "NAMESPACE", r.ByNamespace, textRows)
	r.textBreakdown(bw, "VERB", r.ByVerb, len(r.ByVerb))
	return bw.Flush()
}

func (r *Report) textInput(w io.Writer) {
	in := r.Input
	fmt.Fprintf(w, "Replayed %d requests", r.Requests)
	if r.Requests > 0 {
		fmt.Fprintf(w, " from %s to %s", r.From.Format(time.RFC3339), r.To.Format(time.RFC3339))
	}
	fmt.Fprintf(w, "\n  (%d lines, %d valid events, %d other stages, %d bad lines)\n", in.Lines, in.Events,
		in.OtherStages, in.BadLines)
	if in.RepeatedIDs > 0 {
		fmt.Fprintf(w, "  warning: %d request IDs completed more than once (the same log given twice?); each was counted\n",
			in.RepeatedIDs)
	}
	for _, b := range in.BadLineSamples {
		fmt.Fprintf(w, "  bad line %s\n", trunc(fmt.Sprintf("%s:%d: %s", b.File, b.Line, b.Err), 108))
	}
	if !r.Proposed {
		fmt.Fprintln(w, "  no proposed configuration (-f): the PROPOSED columns repeat the current classification")
	}
	r.textNotProjected(w)
}

// textNotProjected lists the manifests' objects the operator would not project: a line each,
// then why, wrapped to the summary's 120 columns.
func (r *Report) textNotProjected(w io.Writer) {
	for _, n := range r.NotProjected {
		fmt.Fprintf(w, "  not projected: %s\n", trunc(fmt.Sprintf("%s %s/%s (%s)", n.Configuration, n.Kind, n.Name, n.Reason), 103))
		for _, line := range wrap(n.Message, 114) {
			fmt.Fprintf(w, "      %s\n", line)
		}
	}
}

// wrap breaks s into lines of at most width bytes at spaces (a longer word is cut).
func wrap(s string, width int) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		for len(word) > width {
			if cur != "" {
				lines, cur = append(lines, cur), ""
			}
			lines, word = append(lines, word[:width]), word[width:]
		}
		switch {
		case cur == "":
			cur = word
		case len(cur)+1+len(word) <= width:
			cur += " " + word
		default:
			lines, cur = append(lines, cur), word
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

func (r *Report) textLevels(w io.Writer) {
	peaks := func(series []LevelSeries) map[string]float64 {
		m := map[string]float64{}
		for _, s := range series {
			m[s.Level] = s.PeakMeanSeats
		}
		return m
	}
	cur, prop := peaks(r.SeatDemand.Current), peaks(r.SeatDemand.Proposed)
	if !r.Proposed {
		prop = cur
	}
	fmt.Fprintf(w, "\n%-52s %11s %11s %11s %23s\n", "PRIORITY LEVEL / FLOWSCHEMA", "CURRENT", "PROPOSED", "CHANGE",
		"PEAK MEAN SEATS (C->P)")
	for _, l := range r.Levels {
		fmt.Fprintf(w, "%-52s %11d %11d %+11d %11.1f->%.1f\n", trunc(l.Level, 52), l.Current, l.Proposed,
			l.Proposed-l.Current, cur[l.Level], prop[l.Level])
		for _, s := range l.FlowSchemas {
			fmt.Fprintf(w, "  %-50s %11d %11d %+11d\n", trunc(s.FlowSchema, 50), s.Current, s.Proposed, s.Proposed-s.Current)
		}
	}
}

func (r *Report) textMoves(w io.Writer) {
	if !r.Proposed {
		return
	}
	if len(r.Moves) == 0 {
		fmt.Fprintln(w, "\nNo request changes priority level.")
		return
	}
	fmt.Fprintln(w, "\nMOVES (current level -> proposed level)")
	for _, m := range r.Moves {
		fmt.Fprintf(w, "%s: %d requests (%.1f%% of %s)\n", trunc(m.From+" -> "+m.To, 70), m.Requests, m.Percent,
			trunc(m.From, 20))
		for _, u := range m.TopUsers {
			fmt.Fprintf(w, "  %-80s %11d %6.1f%% of its requests\n", trunc(u.User, 80), u.Requests, u.Percent)
		}
	}
}

func (r *Report) textBreakdown(w io.Writer, title string, rows []Breakdown, n int) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%-40s %11s  %-32s %s\n", title, "REQUESTS", "CURRENT FLOWSCHEMA/LEVEL", "PROPOSED FLOWSCHEMA/LEVEL")
	for _, b := range rows[:min(n, len(rows))] {
		key := b.Key
		if key == "" {
			key = "(none)"
		}
		fmt.Fprintf(w, "%-40s %11d  %-32s %s\n", trunc(key, 40), b.Requests, landed(b.Current), landed(b.Proposed))
	}
	if len(rows) > n {
		fmt.Fprintf(w, "... %d more (-o json lists all)\n", len(rows)-n)
	}
}

// landed names the main landing place and how many others there are, in 32 columns.
func landed(ls []Landed) string {
	if len(ls) == 0 {
		return ""
	}
	more := ""
	if len(ls) > 1 {
		more = fmt.Sprintf(" +%d", len(ls)-1)
	}
	return trunc(ls[0].SchemaName()+"/"+ls[0].LevelName(), 32-len(more)) + more
}

// trunc shortens s to n bytes, marking the cut with "~".
func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "~"
}
