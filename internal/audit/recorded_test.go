package audit

import (
	"strings"
	"testing"
	"time"
)

func TestReadRecorded(t *testing.T) {
	in := strings.Join([]string{
		`{"id":"r1","time":"2026-01-02T15:04:05.123Z","durationSeconds":0.5,"user":"alice","groups":["dev","system:authenticated"],"verb":"list","apiGroup":"apps","resource":"deployments","namespace":"shop"}`,
		`{"time":"2026-01-02T15:04:06Z","end":"2026-01-02T15:04:07Z","user":"system:anonymous","verb":"get","path":"/healthz"}`,
		`{"id":"r1","time":"2026-01-02T15:04:05Z","user":"alice","verb":"get","resource":"pods"}`,
		`{"time":"2026-01-02T15:04:06Z","user":"bob","verb":"get","resource":"pods","colour":"red"}`,
		`{"time":"2026-01-02T15:04:06Z","user":"bob","verb":"get"}`,
		`{"time":"2026-01-02T15:04:06Z","user":"bob","verb":"get","path":"/x","namespace":"ns"}`,
		`{"time":"2026-01-02T15:04:06Z","user":"bob","verb":"get","path":"/x","durationSeconds":-1}`,
		`{"user":"bob","verb":"get","path":"/x"}`,
	}, "\n")
	r := NewReader()
	var got []Request
	emit := func(q *Request) { got = append(got, *q) }
	if err := r.ReadRecorded("list", strings.NewReader(in), emit); err != nil {
		t.Fatal(err)
	}
	r.Finish(emit)
	s := r.Stats()
	if len(got) != 3 || s.BadLines != 5 || s.RepeatedIDs != 1 {
		t.Fatalf("%d requests, stats %+v; want 3 requests, 5 bad lines, 1 repeated id", len(got), s)
	}
	a := got[0].Attributes
	if a.User != "alice" || len(a.Groups) != 2 || a.APIGroup != "apps" || a.Resource != "deployments" || !a.ResourceRequest ||
		got[0].Completed.Sub(got[0].Received) != 500*time.Millisecond {
		t.Errorf("first request %+v; want alice's list of apps/deployments taking 0.5s", got[0])
	}
	if b := got[1]; b.Attributes.ResourceRequest || b.Attributes.Path != "/healthz" || b.Completed.Sub(b.Received) != time.Second {
		t.Errorf("second request %+v; want the non-resource /healthz taking 1s", b)
	}
	for i, want := range []string{`unknown key "colour"`, "give resource", "drop apiGroup", "durationSeconds -1", "time missing"} {
		if e := s.BadLineSamples[i]; !strings.Contains(e.Err, want) || e.Line != i+4 {
			t.Errorf("bad line %d: %+v; want line %d saying %q", i, e, i+4, want)
		}
	}
}
