package replay

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/audit"
	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/nativetest"
	"github.com/apf-operator/apf-operator/internal/nativeview"
)

// readSynthetic returns the requests of a synthetic log of n events.
func readSynthetic(t *testing.T, n int) (string, []audit.Request) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeSyntheticLog(f, n, 5); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	r := audit.NewReader()
	var reqs []audit.Request
	in, _ := os.Open(path)
	defer in.Close()
	if err := r.ReadAudit(path, in, func(q *audit.Request) { reqs = append(reqs, *q) }); err != nil || len(reqs) != n {
		t.Fatalf("reading the synthetic log: %d requests, %v", len(reqs), err)
	}
	return path, reqs
}

func loadNative(t *testing.T, file string) nativeview.Objects {
	t.Helper()
	rps, fss, err := manifest.LoadObjects([]string{file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return projectObjects(rps, fss, nativeview.BootstrapObjects())
}

// oracle returns kube-apiserver's own classification of requests by objs: its APF
// controller's pick (nativetest), for the requests it classifies at all.
func oracle(t *testing.T, objs nativeview.Objects) func(a *request.Attributes) Class {
	t.Helper()
	kube := nativetest.Start(t, objs.PriorityLevels, objs.FlowSchemas)
	t.Cleanup(kube.Close)
	levels := map[string]string{}
	for _, fs := range objs.FlowSchemas {
		levels[fs.Name] = fs.Spec.PriorityLevelConfiguration.Name
	}
	return func(a *request.Attributes) Class {
		if !native.Classified(a) {
			return Class{}
		}
		fs := kube.Pick(a)
		return Class{FlowSchema: fs, PriorityLevel: levels[fs]}
	}
}

func TestClassifierMatchesKubeAPIServer(t *testing.T) {
	objs := loadNative(t, "testdata/proposed.yaml")
	// A schema whose level does not exist is dangling: kube-apiserver skips it.
	dangling := *objs.FlowSchemas[0].DeepCopy()
	dangling.Name, dangling.Spec.MatchingPrecedence = "dangling", 2
	dangling.Spec.PriorityLevelConfiguration.Name = "missing"
	dangling.Spec.Rules = []flowcontrolv1.PolicyRulesWithSubjects{{
		Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: "*"}}},
		NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}}}
	objs.FlowSchemas = append(objs.FlowSchemas, dangling)
	c := NewNativeClassifier(objs.FlowSchemas, objs.PriorityLevels)
	kube := oracle(t, objs)
	_, reqs := readSynthetic(t, 5000)
	kinds := map[string]bool{}
	for i := range reqs {
		a := &reqs[i].Attributes
		got, want := c.Classify(a), kube(a)
		if got != want {
			t.Fatalf("%+v: classified %+v; kube-apiserver says %+v", a, got, want)
		}
		kinds[got.FlowSchema] = true
	}
	if len(kinds) < 8 || kinds["dangling"] {
		t.Errorf("the synthetic log reached only FlowSchemas %v; want at least 8, never the dangling one", kinds)
	}
}

func TestReportCountsMoves(t *testing.T) {
	path, reqs := readSynthetic(t, 20000)
	cur, prop := loadNative(t, "testdata/current.yaml"), loadNative(t, "testdata/proposed.yaml")
	kubeCur, kubeProp := oracle(t, cur), oracle(t, prop)
	// The expected moves, counted without the engine.
	type mv struct{ from, to string }
	want := map[mv]int64{}
	wantUser := map[string]int64{}
	perUser := map[string]int64{}
	for i := range reqs {
		a := &reqs[i].Attributes
		perUser[a.User]++
		from, to := kubeCur(a).LevelName(), kubeProp(a).LevelName()
		if from != to {
			want[mv{from, to}]++
			wantUser[a.User]++
		}
	}
	if len(want) == 0 {
		t.Fatal("the test configurations move no request")
	}
	var out bytes.Buffer
	cmd := NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"--audit-log", path, "--current-dir", "testdata/current.yaml", "-f", "testdata/proposed.yaml", "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var r Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Requests != int64(len(reqs)) || len(r.Moves) != len(want) {
		t.Fatalf("report: %d requests, moves %+v; want %d requests, moves %v", r.Requests, r.Moves, len(reqs), want)
	}
	for _, m := range r.Moves {
		if m.Requests != want[mv{m.From, m.To}] {
			t.Errorf("move %s -> %s: %d requests; want %d", m.From, m.To, m.Requests, want[mv{m.From, m.To}])
		}
		for _, u := range m.TopUsers {
			if wantPct := float64(wantUser[u.User]) * 100 / float64(perUser[u.User]); len(want) == 1 && (u.Percent-wantPct) > 1e-9 {
				t.Errorf("user %s: %.3f%% moved; want %.3f%%", u.User, u.Percent, wantPct)
			}
		}
	}
	var total int64
	for _, l := range r.Levels {
		total += l.Current
	}
	if total != r.Requests {
		t.Errorf("the levels hold %d requests; want %d", total, r.Requests)
	}
}

func TestOutputs(t *testing.T) {
	path, _ := readSynthetic(t, 3000)
	run := func(format string) string {
		var out, errOut bytes.Buffer
		cmd := NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		cmd.SetArgs([]string{"--audit-log", path, "--current-dir", "testdata/current.yaml", "-f", "testdata/proposed.yaml", "-o", format})
		if err := cmd.Execute(); err != nil {
			t.Fatalf("-o %s: %v\n%s", format, err, errOut.String())
		}
		return out.String()
	}
	text := run("text")
	for i, line := range strings.Split(text, "\n") {
		if len(line) > 120 {
			t.Errorf("text line %d has %d columns: %q", i+1, len(line), line)
		}
	}
	if !strings.Contains(text, "workload-low -> apf-gitops") {
		t.Errorf("the text summary shows no move to apf-gitops:\n%s", text)
	}
	gh := run("github")
	first := strings.SplitN(gh, "\n", 2)[0]
	if !strings.HasPrefix(first, "::notice title=APF replay::this change moves ") ||
		!strings.Contains(first, "of system:serviceaccount:argocd:argocd-application-controller's requests from workload-low to apf-gitops") {
		t.Errorf("-o github's first annotation: %q", first)
	}
	if !strings.Contains(gh, "::notice title=APF replay summary::replayed 3000 requests") {
		t.Errorf("-o github has no summary:\n%s", gh)
	}
}

func TestSeatDemandBuckets(t *testing.T) {
	objs := nativeview.BootstrapObjects()
	c := NewNativeClassifier(objs.FlowSchemas, objs.PriorityLevels)
	e := NewEngine(c, nil, time.Minute)
	t0 := time.Date(2026, 1, 1, 10, 0, 30, 0, time.UTC)
	a := request.Attributes{User: "u", Groups: []string{"system:authenticated"}, Verb: "get", Resource: "pods", Namespace: "x", ResourceRequest: true}
	// 90 seconds from 10:00:30: 30 s in the first bucket, 60 s in the second.
	e.Add(&audit.Request{Attributes: a, Received: t0, Completed: t0.Add(90 * time.Second)})
	// 10:00:30 to 10:03:15: 30 s, two full buckets, 15 s.
	e.Add(&audit.Request{Attributes: a, Received: t0, Completed: t0.Add(165 * time.Second)})
	w := a
	w.Verb = "watch" // a watch occupies no seat for its whole life
	e.Add(&audit.Request{Attributes: w, Received: t0, Completed: t0.Add(time.Hour)})
	r, err := e.Report(audit.Stats{})
	if err != nil {
		t.Fatal(err)
	}
	d := r.SeatDemand
	if d.Buckets != 4 || len(d.Current) != 1 || !d.Start.Equal(t0.Truncate(time.Minute)) {
		t.Fatalf("seat demand %+v; want 4 buckets of global-default from 10:00", d)
	}
	s := d.Current[0]
	if s.Level != "global-default" || !slices.Equal(s.MeanSeats, []float64{1, 2, 1, 0.25}) ||
		!slices.Equal(s.Arrivals, []int64{3, 0, 0, 0}) || s.PeakMeanSeats != 2 || !s.PeakAt.Equal(t0.Truncate(time.Minute).Add(time.Minute)) {
		t.Errorf("series %+v; want global-default, mean seats [1 2 1 0.25], 3 arrivals then none, peak 2 at 10:01", s)
	}
	e2 := NewEngine(c, nil, time.Millisecond)
	e2.Add(&audit.Request{Attributes: a, Received: t0, Completed: t0.Add(time.Hour)})
	if _, err := e2.Report(audit.Stats{}); err == nil || !strings.Contains(err.Error(), "give a larger --bucket") {
		t.Errorf("an hour in 1ms buckets: %v; want an error asking for a larger --bucket", err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--audit-log", "-", "--requests", "-"},
		{"--audit-log", "x", "-o", "wide"},
		{"--audit-log", "x", "--bucket", "0s"},
		{"--audit-log", "x", "--operator-service-account", "nope"},
	} {
		var out bytes.Buffer
		cmd := NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
		cmd.SetArgs(args)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestRecordedList(t *testing.T) {
	var lines []string
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 100 {
		ns := []string{"shop", "web"}[rng.IntN(2)]
		lines = append(lines, `{"time":"2026-01-02T15:04:05Z","durationSeconds":0.1,"user":"dev-`+string(rune('a'+i%5))+
			`","groups":["tenants","system:authenticated"],"verb":"list","resource":"pods","namespace":"`+ns+`"}`)
	}
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\nnot json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"--requests", path, "--current-dir", "testdata/current.yaml", "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Requests != 100 || r.Input.BadLines != 1 || r.Input.BadLineSamples[0].Line != 101 || len(r.Levels) != 1 ||
		r.Levels[0].Level != "apf-tenant-workloads" {
		t.Errorf("report %+v; want 100 requests all on apf-tenant-workloads, bad line 101", r)
	}
}

// TestHugeDurationBounded: an event that claims to run for two centuries neither hangs the replay
// nor fills memory; the report asks for a larger --bucket.
func TestHugeDurationBounded(t *testing.T) {
	objs := nativeview.BootstrapObjects()
	e := NewEngine(NewNativeClassifier(objs.FlowSchemas, objs.PriorityLevels), nil, time.Millisecond)
	a := request.Attributes{User: "u", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/x"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 1000 {
		e.Add(&audit.Request{Attributes: a, Received: t0, Completed: t0.AddDate(200, 0, 0)})
	}
	if n := len(e.seats[0]); n > maxBuckets+1 {
		t.Errorf("%d buckets filled; want at most %d", n, maxBuckets+1)
	}
	if _, err := e.Report(audit.Stats{}); err == nil || !strings.Contains(err.Error(), "give a larger --bucket") {
		t.Errorf("report error %v; want one asking for a larger --bucket", err)
	}
}
