package scale

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

var (
	timelineStep = flag.Duration("scale.timeline", 0, "print, per step of this length from the first creation, the "+
		"load's creations, the operator's status, native and event writes (audit log) and its snapshots (its log, "+
		"-scale.operator=process); 0: no timeline")
	keepLogs = flag.String("scale.keep-logs", "", "directory to copy the audit log and the operator's log into, "+
		"for analysis after the run")
)

// timeline counts, per step, what happened during a run: where convergence time goes.
type timeline struct {
	start time.Time
	step  time.Duration
	rows  []timelineRow
}

// timelineRow is one step of a timeline.
type timelineRow struct {
	creations, status, native, events, refused int
	snapshots                                  []string
}

func newTimeline(start time.Time, step time.Duration) *timeline {
	return &timeline{start: start, step: step}
}

// row returns the row of the step holding t (never before the first).
func (tl *timeline) row(t time.Time) *timelineRow {
	i := max(0, int(t.Sub(tl.start)/tl.step))
	for len(tl.rows) <= i {
		tl.rows = append(tl.rows, timelineRow{})
	}
	return &tl.rows[i]
}

// timedAuditEvent is an audit event with the time its response completed.
type timedAuditEvent struct {
	auditEvent
	StageTimestamp time.Time `json:"stageTimestamp"`
}

// addAudit counts the writes of the audit log at path: the load's creations of our kinds and
// the operator's writes.
func (tl *timeline) addAudit(path string, operator func(userAgent string) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev timedAuditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("audit log %s: %w", path, err)
		}
		if ev.ObjectRef == nil || ev.ResponseStatus == nil {
			continue
		}
		tl.addEvent(&ev, operator(ev.UserAgent))
	}
	return sc.Err()
}

func (tl *timeline) addEvent(ev *timedAuditEvent, byOperator bool) {
	ref, r := ev.ObjectRef, tl.row(ev.StageTimestamp)
	switch {
	case !byOperator:
		if ev.Verb == "create" && ref.APIGroup == "flowcontrol.apf-operator.io" && ev.ResponseStatus.Code < 300 {
			r.creations++
		}
	case ev.ResponseStatus.Code >= 300:
		r.refused++
	case ref.APIGroup == "flowcontrol.apf-operator.io" && ref.Subresource == "status":
		r.status++
	case ref.APIGroup == "flowcontrol.apiserver.k8s.io":
		r.native++
	case ref.Resource == "events":
		r.events++
	}
}

// snapshotLogLine is the operator's log line for a computed snapshot (controllers/snapshot_holder.go).
type snapshotLogLine struct {
	TS       json.RawMessage `json:"ts"`
	Msg      string          `json:"msg"`
	Took     float64         `json:"seconds"`
	MidBurst bool            `json:"midBurst"`
}

// addSnapshots adds the snapshots the operator's JSON log reports.
func (tl *timeline) addSnapshots(log string) {
	for _, line := range strings.Split(log, "\n") {
		var l snapshotLogLine
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &l) != nil || l.Msg != snapshotLogMessage {
			continue
		}
		at, ok := logTime(l.TS)
		if !ok {
			continue
		}
		mark := fmt.Sprintf("%+.1fs:%.1fs", at.Sub(tl.start).Seconds(), l.Took)
		if l.MidBurst {
			mark += "(mid-burst)"
		}
		r := tl.row(at)
		r.snapshots = append(r.snapshots, mark)
	}
}

// logTime reads a zap timestamp: epoch seconds, or an RFC 3339 string (the operator's flags
// choose).
func logTime(ts json.RawMessage) (time.Time, bool) {
	var epoch float64
	if json.Unmarshal(ts, &epoch) == nil {
		sec, frac := math.Modf(epoch)
		return time.Unix(int64(sec), int64(frac*1e9)), true
	}
	var text string
	if json.Unmarshal(ts, &text) != nil {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, text)
	return at, err == nil
}

// snapshotLogMessage is the message of the operator's log line for each snapshot.
const snapshotLogMessage = "Computed the effective configuration"

func (tl *timeline) print(out io.Writer) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	_, _ = fmt.Fprintln(tw, "from (s)\tcreations\tstatus\tnative\tevents\trefused\tsnapshots (start:duration)\t")
	for i, r := range tl.rows {
		_, _ = fmt.Fprintf(tw, "%.0f\t%d\t%d\t%d\t%d\t%d\t%s\t\n", (time.Duration(i) * tl.step).Seconds(),
			r.creations, r.status, r.native, r.events, r.refused, strings.Join(r.snapshots, " "))
	}
	_ = tw.Flush()
}

// copyFile copies src into dir under its base name.
func copyFile(src, dir string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, filepath.Base(src)), data, 0o600)
}

// keepEvidence prints the timeline (-scale.timeline) and keeps the logs (-scale.keep-logs).
func keepEvidence(auditLog string, op operatorUnderTest, start time.Time) error {
	if *timelineStep > 0 {
		tl := newTimeline(start, *timelineStep)
		if err := tl.addAudit(auditLog, op.wrote); err != nil {
			return err
		}
		tl.addSnapshots(op.log())
		tl.print(os.Stdout)
	}
	if *keepLogs == "" {
		return nil
	}
	if err := os.MkdirAll(*keepLogs, 0o750); err != nil {
		return err
	}
	if err := copyFile(auditLog, *keepLogs); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*keepLogs, "operator.log"), []byte(op.log()), 0o600)
}
