package audit

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// readAll reads audit lines and returns the requests handed on (copies) and the stats.
func readAll(t *testing.T, logs ...string) ([]Request, Stats) {
	t.Helper()
	r := NewReader()
	var out []Request
	emit := func(req *Request) { out = append(out, *req) }
	for i, l := range logs {
		if err := r.ReadAudit(fmt.Sprintf("log%d", i), strings.NewReader(l), emit); err != nil {
			t.Fatal(err)
		}
	}
	r.Finish(emit)
	return out, r.Stats()
}

func event(id, stage string, mutate func(*auditv1.Event)) string {
	ts := metav1.NewMicroTime(time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC))
	e := auditv1.Event{
		TypeMeta: metav1.TypeMeta{Kind: "Event", APIVersion: "audit.k8s.io/v1"},
		Level:    auditv1.LevelMetadata, AuditID: types.UID(id), Stage: auditv1.Stage(stage),
		RequestURI: "/api/v1/namespaces/shop/pods/web-1", Verb: "get",
		User:                     authnv1.UserInfo{Username: "alice", Groups: []string{"dev", "system:authenticated"}},
		ObjectRef:                &auditv1.ObjectReference{Resource: "pods", Namespace: "shop", Name: "web-1", APIVersion: "v1"},
		RequestReceivedTimestamp: ts, StageTimestamp: metav1.NewMicroTime(ts.Add(30 * time.Millisecond)),
		Annotations: map[string]string{"authorization.k8s.io/reason": `RBAC: allowed by "x"`},
	}
	if mutate != nil {
		mutate(&e)
	}
	b, err := json.Marshal(&e)
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

func TestReadAuditAttributes(t *testing.T) {
	reqs, stats := readAll(t, event("a", "ResponseComplete", nil)+
		event("b", "ResponseComplete", func(e *auditv1.Event) {
			e.ImpersonatedUser = &authnv1.UserInfo{Username: "system:serviceaccount:ci:bot",
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ci", "system:authenticated"}}
			e.ObjectRef = &auditv1.ObjectReference{Resource: "deployments", Subresource: "scale", APIGroup: "apps", Namespace: "ci", Name: "x"}
			e.Verb = "update"
		})+
		event("c", "ResponseComplete", func(e *auditv1.Event) {
			e.ObjectRef, e.RequestURI, e.Verb = nil, "/readyz?verbose=1", "get"
		}))
	if stats.Requests != 3 || stats.BadLines != 0 || len(reqs) != 3 {
		t.Fatalf("stats %+v, %d requests; want 3 requests, no bad line", stats, len(reqs))
	}
	want := []request.Attributes{
		{User: "alice", Groups: []string{"dev", "system:authenticated"}, Verb: "get", Resource: "pods", Namespace: "shop",
			Name: "web-1", ResourceRequest: true},
		{User: "system:serviceaccount:ci:bot", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ci", "system:authenticated"},
			Verb: "update", APIGroup: "apps", Resource: "deployments", Subresource: "scale", Namespace: "ci", Name: "x", ResourceRequest: true},
		{User: "alice", Groups: []string{"dev", "system:authenticated"}, Verb: "get", Path: "/readyz"},
	}
	for i := range want {
		if !reflect.DeepEqual(reqs[i].Attributes, want[i]) {
			t.Errorf("request %d: %+v; want %+v", i, reqs[i].Attributes, want[i])
		}
	}
	if d := reqs[0].Completed.Sub(reqs[0].Received); d != 30*time.Millisecond || reqs[0].ID != "a" {
		t.Errorf("request a: id %q, duration %s; want a, 30ms", reqs[0].ID, d)
	}
}

func TestReadAuditStages(t *testing.T) {
	log1 := event("a", "RequestReceived", nil) + event("b", "RequestReceived", nil) + event("a", "ResponseComplete", nil) +
		event("w", "RequestReceived", nil) + event("w", "ResponseStarted", nil) + event("w", "Panic", nil) +
		event("late", "ResponseComplete", nil)
	log2 := event("late", "RequestReceived", nil) + event("again", "ResponseComplete", nil) + event("again", "ResponseComplete", nil)
	reqs, stats := readAll(t, log1, log2)
	var ids []string
	for _, r := range reqs {
		ids = append(ids, r.ID)
	}
	// b has only its RequestReceived event: it counts at the end; late's RequestReceived came
	// after its completion (logs out of order) and does not count again.
	if got := strings.Join(ids, ","); got != "a,w,late,again,again,b" {
		t.Errorf("requests %s; want a,w,late,again,again,b", got)
	}
	if stats.Requests != 6 || stats.OtherStages != 4 || stats.RepeatedIDs != 1 || stats.Events != 10 {
		t.Errorf("stats %+v; want 6 requests, 4 other stages, 1 repeated ID, 10 events", stats)
	}
	if b := reqs[5]; !b.Completed.Equal(b.Received) {
		t.Errorf("RequestReceived-only request: completed %s, received %s; want equal", b.Completed, b.Received)
	}
}

func TestReadAuditBadLines(t *testing.T) {
	lines := []string{
		event("ok", "ResponseComplete", nil),
		"{not json\n",
		"\n", // blank: skipped, not bad
		`{"kind":"Event","auditID":"x","stage":"ResponseComplete","verb":"get","user":{"username":"u"}}` + "\n",
		`{"kind":"Pod","metadata":{}}` + "\n",
		event("t", "ResponseComplete", nil)[:60] + "\n",
		`{"kind":"Event","auditID":"g","stage":"ResponseComplete","verb":"get","user":{"username":"u","groups":[1]},"requestReceivedTimestamp":"2026-11-26T17:00:00Z"}` + "\n",
		`{"kind":"Event","auditID":"d","stage":"ResponseComplete","verb":"get","user":{"username":"u"},"requestReceivedTimestamp":"yesterday"}` + "\n",
		event("ok2", "ResponseComplete", nil),
	}
	reqs, stats := readAll(t, strings.Join(lines, ""))
	if len(reqs) != 2 || stats.BadLines != 6 || stats.Lines != 8 {
		t.Fatalf("%d requests, stats %+v; want 2 requests, 6 bad of 8 lines", len(reqs), stats)
	}
	wantLines := []int{2, 4, 5, 6, 7}
	for i, want := range wantLines {
		if got := stats.BadLineSamples[i]; got.Line != want || got.File != "log0" || got.Err == "" {
			t.Errorf("bad line sample %d = %+v; want log0 line %d with an error", i, got, want)
		}
	}
	if !strings.Contains(stats.BadLineSamples[0].Err, "want a key") {
		t.Errorf("line 2's error %q; want it to say a key is expected", stats.BadLineSamples[0].Err)
	}
	_, stats = readAll(t, lines[7])
	if stats.BadLines != 1 || !strings.Contains(stats.BadLineSamples[0].Err, "requestReceivedTimestamp: parsing time") {
		t.Errorf("a bad timestamp: %+v; want a bad line naming requestReceivedTimestamp", stats)
	}
	_, stats = readAll(t, strings.Replace(lines[0], "2026-11-26T17:00:00.030000Z", "9999-01-01T00:00:00Z", 1))
	if stats.BadLines != 1 || !strings.Contains(stats.BadLineSamples[0].Err, "stageTimestamp: 9999-01-01T00:00:00Z: out of range") {
		t.Errorf("a timestamp past 2261: %+v; want a bad line saying it is out of range", stats)
	}
	_, stats = readAll(t, strings.Join(lines, ""))
	for _, want := range []string{"requestReceivedTimestamp missing", `kind "Pod"`, "groups"} {
		found := false
		for _, s := range stats.BadLineSamples {
			found = found || strings.Contains(s.Err, want)
		}
		if !found {
			t.Errorf("no bad line sample mentions %q: %+v", want, stats.BadLineSamples)
		}
	}
}

func TestOpenGzipByMagic(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	_, _ = z.Write([]byte(event("a", "ResponseComplete", nil) + event("b", "ResponseComplete", nil)))
	_ = z.Close()
	for name, data := range map[string][]byte{"audit.log": buf.Bytes(), "plain.gz": []byte(event("c", "ResponseComplete", nil))} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := NewReader()
		n := 0
		if err := r.ReadAudit(path, f, func(*Request) { n++ }); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
		if want := map[string]int{"audit.log": 2, "plain.gz": 1}[name]; n != want || r.Stats().BadLines != 0 {
			t.Errorf("%s: %d requests, %d bad lines; want %d, 0", name, n, r.Stats().BadLines, want)
		}
	}
}

func TestLongLine(t *testing.T) {
	big := event("big", "ResponseComplete", func(e *auditv1.Event) {
		e.Annotations["padding"] = strings.Repeat("x", 3<<20)
	})
	reqs, stats := readAll(t, event("a", "ResponseComplete", nil)+big+event("c", "ResponseComplete", nil))
	if len(reqs) != 3 || stats.BadLines != 0 || reqs[1].ID != "big" {
		t.Fatalf("%d requests, stats %+v; want 3, the 3 MiB line among them", len(reqs), stats)
	}
}

// TestDecodeMatchesEncodingJSON is the decoder's oracle: for random events, including escapes,
// nulls and unknown fields, the attributes equal those built from encoding/json's decoding of
// the full auditv1.Event.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	words := []string{"a", "pods", "ns-1", `quo"te`, `back\slash`, "ünïcode", "tab\tbed", "", "system:masters", "</script>"}
	w := func() string { return words[rng.IntN(len(words))] }
	var log strings.Builder
	var want []auditv1.Event
	for i := range 500 {
		e := auditv1.Event{TypeMeta: metav1.TypeMeta{Kind: "Event", APIVersion: "audit.k8s.io/v1"},
			AuditID: types.UID(fmt.Sprintf("id-%d", i)), Stage: auditv1.StageResponseComplete, Verb: w() + "v",
			RequestURI: "/" + w() + "?q=" + w(), User: authnv1.UserInfo{Username: "u" + w(), Groups: []string{w(), w()},
				Extra: map[string]authnv1.ExtraValue{"k": {w()}}},
			SourceIPs: []string{"1.2.3.4"}, UserAgent: w(),
			RequestReceivedTimestamp: metav1.NewMicroTime(time.Unix(int64(rng.IntN(1e9)), int64(rng.IntN(1e9))).UTC())}
		e.StageTimestamp = metav1.NewMicroTime(e.RequestReceivedTimestamp.Add(time.Duration(rng.IntN(1e9))))
		if rng.IntN(2) == 0 {
			e.ObjectRef = &auditv1.ObjectReference{Resource: w(), Subresource: w(), APIGroup: w(), Namespace: w(), Name: w()}
		}
		if rng.IntN(3) == 0 {
			e.ImpersonatedUser = &authnv1.UserInfo{Username: "i" + w(), Groups: []string{w()}}
		}
		if rng.IntN(3) == 0 {
			e.ResponseStatus = &metav1.Status{Code: int32(rng.IntN(600)), Message: w()}
		}
		b, _ := json.Marshal(&e)
		log.Write(b)
		log.WriteString("\n")
		var back auditv1.Event // what encoding/json reads back (MicroTime keeps microseconds)
		_ = json.Unmarshal(b, &back)
		want = append(want, back)
	}
	reqs, stats := readAll(t, log.String())
	if len(reqs) != len(want) || stats.BadLines != 0 {
		t.Fatalf("%d requests, stats %+v; want %d, no bad line", len(reqs), stats, len(want))
	}
	for i, e := range want {
		got, exp := reqs[i], fromEvent(&e)
		if !got.Received.Equal(exp.Received) || !got.Completed.Equal(exp.Completed) {
			t.Fatalf("event %d: times %s..%s; want %s..%s", i, got.Received, got.Completed, exp.Received, exp.Completed)
		}
		got.Received, got.Completed, exp.Received, exp.Completed = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, exp) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, got, exp)
		}
	}
}

// fromEvent builds a Request from a fully decoded event, the straightforward way.
func fromEvent(e *auditv1.Event) Request {
	u := e.User
	if e.ImpersonatedUser != nil {
		u = *e.ImpersonatedUser
	}
	r := Request{ID: string(e.AuditID), Received: e.RequestReceivedTimestamp.Time, Completed: e.StageTimestamp.Time,
		Attributes: request.Attributes{User: u.Username, Groups: u.Groups, Verb: e.Verb}}
	if o := e.ObjectRef; o != nil {
		r.Attributes.ResourceRequest = true
		r.Attributes.Resource, r.Attributes.Subresource, r.Attributes.APIGroup = o.Resource, o.Subresource, o.APIGroup
		r.Attributes.Namespace, r.Attributes.Name = o.Namespace, o.Name
	} else {
		r.Attributes.Path, _, _ = strings.Cut(e.RequestURI, "?")
	}
	if len(r.Attributes.Groups) == 0 {
		r.Attributes.Groups = nil
	}
	return r
}
