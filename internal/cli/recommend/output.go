package recommend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// headers are the table's columns.
var headers = []string{"REQUESTPRIORITY", "LEVEL", "SHARES", "SEATS", "DEMAND P95", "PEAK", "REJECTED", "WAIT P99", "WHY"}

// cells are one row's table cells, in the order of headers.
func (r row) cells() []string {
	wait := "-"
	if r.WaitKnown {
		wait = seconds(r.WaitP99)
	}
	return []string{r.Object, r.Level, arrow(fmt.Sprint(r.Shares), fmt.Sprint(r.RecommendedShares)),
		arrow(seats(r.Seats), seats(r.ProjectedSeats)), seats(r.DemandSeats), seats(r.Peak),
		strconv.FormatFloat(r.Rejected, 'f', 0, 64), wait, r.Why}
}

// heading is the first line of the table and of the Markdown.
func (rep *report) heading() string {
	return fmt.Sprintf("window %s of kube-apiserver's flow-control metrics (%s)", rep.Window, rep.Source)
}

// footer says that the pool's total is unchanged, and what that means for other levels.
func (rep *report) footer() string {
	return fmt.Sprintf("total shares of the operator's levels unchanged (%d): every other level keeps its nominal seats", rep.TotalShares)
}

// summary counts the changes.
func (rep *report) summary() string {
	switch n := rep.changes(); n {
	case 0:
		return "no change recommended"
	case 1:
		return "1 RequestPriority to change"
	default:
		return fmt.Sprintf("%d RequestPriorities to change", n)
	}
}

// writeTable prints the heading, the rows in kubectl's table style, the skipped objects and the
// footer.
func writeTable(out io.Writer, rep *report) error {
	fmt.Fprintln(out, rep.heading())
	fmt.Fprintln(out)
	if len(rep.Rows) == 0 {
		fmt.Fprintln(out, emptyPool)
		return writeTail(out, rep)
	}
	w := printers.GetNewTabWriter(out)
	fmt.Fprintln(w, strings.Join(headers, "\t"))
	for _, r := range rep.Rows {
		fmt.Fprintln(w, strings.Join(r.cells(), "\t"))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	return writeTail(out, rep)
}

// emptyPool replaces the table when no level is in the pool.
const emptyPool = "no RequestPriority in the pool: none is projected with shares and measured in both reads"

// writeTail prints the skipped objects and the footer.
func writeTail(out io.Writer, rep *report) error {
	for _, s := range rep.Skipped {
		fmt.Fprintf(out, "skipped %s: %s\n", s.Object, s.Reason)
	}
	_, err := fmt.Fprintf(out, "%s; %s\n", rep.summary(), rep.footer())
	return err
}

// patch is the multi-document YAML of the changed RequestPriorities: each document a partial
// object with only the spec fields that change, after a comment naming where it is written.
// Empty when nothing changes.
func (rep *report) patch() ([]byte, error) {
	var b bytes.Buffer
	for _, r := range rep.Rows {
		if !r.changed() {
			continue
		}
		data, err := yaml.Marshal(r.partial())
		if err != nil {
			return nil, err
		}
		if b.Len() > 0 {
			b.WriteString("---\n")
		}
		if r.Where.File != "" {
			fmt.Fprintf(&b, "# %s\n", r.Where)
		}
		b.Write(data)
	}
	return b.Bytes(), nil
}

// patchList is the patch of -o json: the partial RequestPriorities of patch, as a v1 List (as
// kubectl and import print several objects in JSON); an empty List when nothing changes.
func (rep *report) patchList() ([]byte, error) {
	items := []map[string]any{}
	for _, r := range rep.Rows {
		if r.changed() {
			items = append(items, r.partial())
		}
	}
	data, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "    ")
	return append(data, '\n'), err
}

// partial is the RequestPriority patch of one row (a strategic or JSON merge patch, a
// kustomize patch).
func (r row) partial() map[string]any {
	spec := map[string]any{}
	if r.sharesChanged() {
		spec["assuredConcurrencyShares"] = r.RecommendedShares
	}
	if r.lendableChanged() {
		spec["lendablePercent"] = r.RecommendedLendable
	}
	if r.borrowingChanged() {
		spec["borrowingLimitPercent"] = r.RecommendedBorrow // nil removes the limit
	}
	return map[string]any{
		"apiVersion": flowv1.GroupVersion.String(),
		"kind":       "RequestPriority",
		"metadata":   map[string]any{"name": r.Object},
		"spec":       spec,
	}
}

// writeGitHub prints GitHub-flavoured Markdown for a pull request: heading, window, table,
// skipped objects, the patch in a fenced block and the footer.
func writeGitHub(out io.Writer, rep *report, patch []byte) error {
	fmt.Fprintf(out, "### apf-operator recommend: %s\n\n", rep.summary())
	fmt.Fprintf(out, "%s.\n\n", upperFirst(rep.heading()))
	if len(rep.Rows) == 0 {
		fmt.Fprintln(out, upperFirst(emptyPool)+".")
	} else {
		writeMarkdownTable(out, rep)
	}
	if len(rep.Skipped) > 0 {
		fmt.Fprintln(out, "\nSkipped:")
		for _, s := range rep.Skipped {
			fmt.Fprintf(out, "- `%s`: %s\n", s.Object, mdCell(s.Reason))
		}
	}
	if len(patch) > 0 {
		fmt.Fprintf(out, "\nPatch for the manifests (a kustomize patch as it is):\n\n```yaml\n%s```\n", patch)
	}
	fmt.Fprintf(out, "\n%s.\n", upperFirst(rep.footer()))
	return nil
}

// writeMarkdownTable prints the rows as a GitHub table.
func writeMarkdownTable(out io.Writer, rep *report) {
	fmt.Fprintln(out, "| "+strings.Join(mdHeaders(), " | ")+" |")
	fmt.Fprintln(out, strings.Repeat("| --- ", len(headers))+"|")
	for _, r := range rep.Rows {
		cells := r.cells()
		for i, c := range cells {
			cells[i] = mdCell(c)
		}
		cells[0], cells[1] = "`"+cells[0]+"`", "`"+cells[1]+"`"
		fmt.Fprintln(out, "| "+strings.Join(cells, " | ")+" |")
	}
}

// mdHeaders are the table's headers in sentence case.
func mdHeaders() []string {
	out := make([]string, len(headers))
	for i, h := range headers {
		out[i] = upperFirst(strings.ToLower(h))
	}
	out[0] = "RequestPriority"
	return out
}

// mdCell escapes what would end a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// arrow is "a -> b", or a alone when they are equal.
func arrow(a, b string) string {
	if a == b {
		return a
	}
	return a + " -> " + b
}

// seats formats seats: one decimal, none when whole.
func seats(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// seconds formats a wait: milliseconds below a second.
func seconds(v float64) string {
	if v < 1 {
		return strconv.FormatFloat(v*1000, 'f', 0, 64) + "ms"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + "s"
}
