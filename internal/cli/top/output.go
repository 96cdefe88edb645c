package top

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// maxWidth is the width every line of the table fits in.
const maxWidth = 120

func writeJSON(out io.Writer, r *Report) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func writeYAML(out io.Writer, r *Report) error {
	data, err := yaml.Marshal(r)
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	return err
}

// column is a table column: its header and the most characters its cells keep.
type column struct {
	header string
	max    int
}

var (
	levelColumns = []column{{"PRIORITY LEVEL", 22}, {"OURS", 22}, {"NOMINAL", 7}, {"LEND", 5}, {"BORROW", 6},
		{"INUSE", 5}, {"QUEUED", 6}, {"DISP/S", 7}, {"REJ/S", 6}, {"QFULL", 5}, {"TMOUT", 5}, {"CLIMIT", 6}, {"P99WAIT", 7}}
	schemaColumns = []column{{"FLOWSCHEMA", 22}, {"OURS", 22}, {"PRIORITY LEVEL", 18}, {"INUSE", 5}, {"QUEUED", 6},
		{"DISP/S", 7}, {"REJ/S", 6}, {"QFULL", 5}, {"TMOUT", 5}, {"CLIMIT", 6}, {"P99WAIT", 7}}
	flowColumns = []column{{"FLOWSCHEMA", 22}, {"OURS", 22}, {"DISTINGUISHER", 24}, {"USERS", 32}, {"QUEUED", 6}, {"EXEC", 5}}
)

// writeTable prints the report as three tables, every line at most maxWidth columns.
func writeTable(out io.Writer, r *Report, limit int) error {
	var b strings.Builder
	head := fmt.Sprintf("%s  window %.1fs", r.Server, r.Window.Seconds)
	if r.Replicas > 0 {
		head += fmt.Sprintf("  kube-apiserver replicas: %d", r.Replicas)
	}
	line(&b, head)
	if r.ReplicaNote != "" {
		line(&b, "NOTE: "+r.ReplicaNote)
	}
	for _, w := range r.Warnings {
		wrapped(&b, "WARNING: "+w)
	}
	b.WriteByte('\n')
	rows := make([][]string, 0, len(r.Levels))
	for _, l := range r.Levels {
		rows = append(rows, append([]string{l.Name, short(l.Source), itoa(l.NominalSeats), itoa(l.LendableSeats),
			itoa(l.BorrowedSeats)}, trafficCells(l.Traffic)...))
	}
	table(&b, levelColumns, rows)
	b.WriteByte('\n')
	rows = rows[:0]
	for _, s := range firstN(r.FlowSchemas, limit) {
		rows = append(rows, append([]string{s.Name, short(s.Source), s.PriorityLevel}, trafficCells(s.Traffic)...))
	}
	table(&b, schemaColumns, rows)
	b.WriteByte('\n')
	line(&b, "FLOWS QUEUED OR EXECUTING NOW")
	if r.FlowsMissing != "" && len(r.Flows) == 0 {
		wrapped(&b, "(not shown: "+r.FlowsMissing+")")
	}
	rows = rows[:0]
	for _, f := range firstN(r.Flows, limit) {
		rows = append(rows, []string{f.FlowSchema, short(f.Source), orDash(f.Distinguisher), orDash(strings.Join(f.Users, ",")),
			itoa(f.Queued), itoa(f.Executing)})
	}
	table(&b, flowColumns, rows)
	_, err := io.WriteString(out, b.String())
	return err
}

// trafficCells are the cells from INUSE to P99WAIT.
func trafficCells(t Traffic) []string {
	wait := "-"
	if t.WaitP99Seconds != nil {
		wait = seconds(*t.WaitP99Seconds)
	}
	return []string{itoa(t.SeatsInUse), itoa(t.Queued), ftoa(t.DispatchedPerSecond), ftoa(t.RejectedPerSecond),
		itoa(t.Rejected.QueueFull), itoa(t.Rejected.TimeOut), itoa(t.Rejected.ConcurrencyLimit), wait}
}

// table writes the header and rows, each cell cut to its column's most characters and padded
// to the column's widest cell, columns one space apart.
func table(b *strings.Builder, cols []column, rows [][]string) {
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = utf8.RuneCountInString(c.header)
	}
	cut := make([][]string, len(rows))
	for r, row := range rows {
		cut[r] = make([]string, len(cols))
		for i := range cols {
			if i < len(row) {
				cut[r][i] = truncate(row[i], cols[i].max)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cut[r][i]))
		}
	}
	headers := make([]string, len(cols))
	for i, c := range cols {
		headers[i] = c.header
	}
	tableRow(b, widths, headers)
	for _, row := range cut {
		tableRow(b, widths, row)
	}
}

func tableRow(b *strings.Builder, widths []int, cells []string) {
	var l strings.Builder
	for i, c := range cells {
		l.WriteString(c)
		if i < len(cells)-1 {
			l.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+1))
		}
	}
	line(b, l.String())
}

// line writes s cut to maxWidth.
func line(b *strings.Builder, s string) {
	b.WriteString(truncate(s, maxWidth))
	b.WriteByte('\n')
}

// wrapped writes s as lines of at most maxWidth columns, broken at spaces (a word longer
// than a line is cut), the continuation lines indented by two spaces.
func wrapped(b *strings.Builder, s string) {
	cur := ""
	for _, word := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = word
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(word) <= maxWidth:
			cur += " " + word
		default:
			line(b, cur)
			cur = "  " + word
		}
	}
	if cur != "" {
		line(b, cur)
	}
}

// truncate cuts s to n characters, ending it with "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// short abbreviates a source "Kind/name" with the kinds' kubectl short names.
func short(source string) string {
	if source == "" {
		return "-"
	}
	s := strings.Replace(source, "RequestPriority/", "rp/", 1)
	return strings.Replace(s, "FlowSchema/", "afs/", 1)
}

func firstN[T any](s []T, n int) []T { return s[:min(n, len(s))] }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// seconds formats a wait: milliseconds below a second.
func seconds(v float64) string {
	if v < 1 {
		return strconv.FormatFloat(v*1000, 'f', 0, 64) + "ms"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + "s"
}
