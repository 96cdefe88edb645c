package replay

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// maxAnnotations bounds the annotations of -o github (GitHub shows only the first few of a
// step anyway).
const maxAnnotations = 10

// WriteGitHub writes GitHub Actions workflow commands: one annotation per user whose requests
// move the most ("this change moves 31% of argocd-application-controller's requests from
// workload-high to workload-low"), a warning when the requests move to kube-apiserver's
// catch-all level (a few seats, rejected rather than queued), a warning per object of the
// manifests that would not be projected, and a summary notice.
func (r *Report) WriteGitHub(w io.Writer) error {
	bw := bufio.NewWriter(w)
	type line struct {
		warn bool
		n    int64
		msg  string
	}
	var lines []line
	for _, m := range r.Moves {
		for _, u := range m.TopUsers {
			lines = append(lines, line{warn: m.To == "catch-all", n: u.Requests,
				msg: fmt.Sprintf("this change moves %s of %s's requests from %s to %s (%d requests)",
					percentText(u.Percent), u.User, m.From, m.To, u.Requests)})
		}
	}
	// The largest moves first; moves are sorted, users within them too.
	slices.SortStableFunc(lines, func(a, b line) int { return cmp.Compare(b.n, a.n) })
	for _, l := range lines[:min(len(lines), maxAnnotations)] {
		kind := "notice"
		if l.warn {
			kind = "warning"
		}
		fmt.Fprintf(bw, "::%s title=APF replay::%s\n", kind, escapeData(l.msg))
	}
	for _, n := range r.NotProjected {
		fmt.Fprintf(bw, "::warning title=APF replay::%s\n", escapeData(fmt.Sprintf(
			"%s %s %s would not be projected (%s), the replay classified without it: %s",
			n.Configuration, n.Kind, n.Name, n.Reason, n.Message)))
	}
	fmt.Fprintf(bw, "::notice title=APF replay summary::%s\n", escapeData(r.summary()))
	return bw.Flush()
}

func (r *Report) summary() string {
	var moved int64
	for _, m := range r.Moves {
		moved += m.Requests
	}
	s := fmt.Sprintf("replayed %d requests: %d (%.1f%%) change priority level", r.Requests, moved, percent(moved, r.Requests))
	if r.Input.BadLines > 0 {
		s += fmt.Sprintf("; %d input lines could not be read", r.Input.BadLines)
	}
	if len(r.NotProjected) > 0 {
		s += fmt.Sprintf("; %d object(s) of the manifests would not be projected", len(r.NotProjected))
	}
	return s
}

// percentText rounds to whole percents, keeping one decimal below 10% (so that 0.4% is not 0%).
func percentText(p float64) string {
	if p < 10 {
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.0f%%", p)
}

// escapeData escapes an annotation message as GitHub's workflow commands require.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}
