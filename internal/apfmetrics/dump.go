package apfmetrics

import (
	"bufio"
	"bytes"
	"strings"
)

// Debug endpoints of kube-apiserver's API Priority and Fairness (text tables, one row per
// priority level, queue or request).
const (
	DumpPriorityLevelsPath = "/debug/api_priority_and_fairness/dump_priority_levels"
	DumpQueuesPath         = "/debug/api_priority_and_fairness/dump_queues"
	// DumpRequestsPath with ?includeRequestDetails=1 adds the user, verb, path and namespace.
	DumpRequestsPath = "/debug/api_priority_and_fairness/dump_requests"
)

// Row is one row of a dump, by column header (for example "PriorityLevelName").
type Row map[string]string

// ParseDump reads a dump table: a header row, then rows whose cells kube-apiserver separates
// with a comma and pads with a tab writer. Cells are matched to headers by position; a row with
// more cells than headers keeps the extra ones joined into the last column (a value holding a
// comma), a shorter one leaves the missing columns out. Blank lines are skipped.
func ParseDump(raw []byte) []Row {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	var headers []string
	var rows []Row
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		cells := splitCells(line)
		if headers == nil {
			headers = cells
			continue
		}
		rows = append(rows, rowOf(headers, cells))
	}
	return rows
}

func splitCells(line string) []string {
	cells := strings.Split(line, ",")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

func rowOf(headers, cells []string) Row {
	row := make(Row, len(headers))
	for i, h := range headers {
		switch {
		case i >= len(cells):
			return row
		case i == len(headers)-1 && len(cells) > len(headers):
			row[h] = strings.Join(cells[i:], ",")
		default:
			row[h] = cells[i]
		}
	}
	return row
}
