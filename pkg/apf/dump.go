package apf

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/fairqueue"
)

// DumpPriorityLevels writes one line per priority level, highest priority first (then removed
// levels whose queues still drain), with its limits and counts, as comma-separated columns
// under a header, in the manner of kube-apiserver's
// /debug/api_priority_and_fairness/dump_priority_levels.
func (f *Filter) DumpPriorityLevels(w io.Writer) error {
	st := f.engine.State()
	rows := [][]string{{"RequestPriority", "PriorityLevel", "Exempt", "Draining", "AssuredConcurrency",
		"ExecutingWidth", "WaitingRequests", "ActiveQueues"}}
	for _, lv := range st.Levels {
		rows = append(rows, []string{lv.Name, itoa(int(lv.Level)), strconv.FormatBool(lv.Exempt),
			strconv.FormatBool(lv.Draining), itoa(lv.AssuredConcurrency), itoa(lv.ExecutingWidth),
			itoa(lv.Waiting), itoa(len(lv.Queues) + len(lv.DrainingQueues))})
	}
	rows = append(rows, []string{"(server)", "", "", "", itoa(st.ServerConcurrencyLimit), itoa(st.ExecutingWidth),
		itoa(st.Waiting), ""})
	return writeColumns(w, rows)
}

// DumpQueues writes one line per non-empty queue of every level (queues with nothing waiting
// or executing are left out), as comma-separated columns under a header, in the manner of
// kube-apiserver's /debug/api_priority_and_fairness/dump_queues.
func (f *Filter) DumpQueues(w io.Writer) error {
	rows := [][]string{{"RequestPriority", "Width", "Index", "WaitingRequests", "ExecutingRequests",
		"VirtualStartSeconds", "Draining"}}
	for _, lv := range f.engine.State().Levels {
		rows = appendQueueRows(rows, &lv, lv.Queues, false)
		rows = appendQueueRows(rows, &lv, lv.DrainingQueues, true)
	}
	return writeColumns(w, rows)
}

func appendQueueRows(rows [][]string, lv *dispatch.LevelState, queues []fairqueue.QueueState, draining bool) [][]string {
	for _, q := range queues {
		rows = append(rows, []string{lv.Name, itoa(q.Width), itoa(q.Index), itoa(q.Length), itoa(q.Executing),
			strconv.FormatFloat(q.VirtualStart, 'f', 6, 64), strconv.FormatBool(draining)})
	}
	return rows
}

// writeColumns writes rows as comma-separated columns padded to a common width.
func writeColumns(w io.Writer, rows [][]string) error {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			if i > 0 {
				b.WriteString(", ")
			}
			if i < len(r)-1 {
				c += strings.Repeat(" ", widths[i]-len(c))
			}
			b.WriteString(c)
		}
		b.WriteString("\n")
	}
	_, err := fmt.Fprint(w, b.String())
	return err
}

func itoa(n int) string { return strconv.Itoa(n) }
