package top

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// fakeSource serves /metrics texts in turn (the last one repeatedly) and a dump.
type fakeSource struct {
	metrics  []string
	reads    int
	dump     string
	dumpErr  error
	own      Owners
	replicaN int
}

func (f *fakeSource) get(_ context.Context, path string) ([]byte, error) {
	if path == "/metrics" {
		m := f.metrics[min(f.reads, len(f.metrics)-1)]
		f.reads++
		return []byte(m), nil
	}
	if f.dumpErr != nil {
		return nil, f.dumpErr
	}
	return []byte(f.dump), nil
}
func (f *fakeSource) owners(context.Context) (Owners, error) { return f.own, nil }
func (f *fakeSource) replicas(context.Context) (int, error)  { return f.replicaN, nil }
func (f *fakeSource) server() string                         { return "https://10.0.0.1:6443" }

// metricsWith is a /metrics text where the long-named tenant schema has rejected rejected
// (queue-full) and dispatched dispatched requests, and global-default dispatched gd.
func metricsWith(rejected, dispatched, gd int) string {
	const long = "apf-a-tenant-with-a-very-long-flowschema-name-that-is-cut"
	return fmt.Sprintf(`apiserver_flowcontrol_nominal_limit_seats{priority_level="%[4]s"} 2
apiserver_flowcontrol_nominal_limit_seats{priority_level="global-default"} 49
apiserver_flowcontrol_lower_limit_seats{priority_level="global-default"} 25
apiserver_flowcontrol_current_limit_seats{priority_level="global-default"} 30
apiserver_flowcontrol_rejected_requests_total{flow_schema="%[4]s",priority_level="%[4]s",reason="queue-full"} %[1]d
apiserver_flowcontrol_dispatched_requests_total{flow_schema="%[4]s",priority_level="%[4]s"} %[2]d
apiserver_flowcontrol_dispatched_requests_total{flow_schema="global-default",priority_level="global-default"} %[3]d
apiserver_flowcontrol_current_inqueue_requests{flow_schema="%[4]s",priority_level="%[4]s"} 1
apiserver_flowcontrol_current_executing_seats{flow_schema="%[4]s",priority_level="%[4]s"} 2
apiserver_flowcontrol_dispatched_requests_total{flow_schema="idle",priority_level="global-default"} 5
`, rejected, dispatched, gd, long)
}

const fakeDump = `PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime, InitialSeats, FinalSeats, AdditionalLatency, StartTime, UserName, Verb
apf-x, apf-x, 0, 0, tenant-a, t, 1, 0, 0s, t, alice, list
apf-x, apf-x, 0, 1, tenant-a, t, 1, 0, 0s, t, alice, list
apf-x, apf-x, 0, -1, tenant-a, t, 1, 0, 0s, t, alice, list
apf-x, apf-x, 1, 0, tenant-b, t, 1, 0, 0s, t, bob, list
`

func runOnce(t *testing.T, src *fakeSource, output string) string {
	t.Helper()
	var out bytes.Buffer
	o := options{interval: 100 * time.Millisecond, output: output, limit: 10}
	if err := o.run(context.Background(), []source{src}, &out, false); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestReportJSON(t *testing.T) {
	long := "apf-a-tenant-with-a-very-long-flowschema-name-that-is-cut"
	src := &fakeSource{metrics: []string{metricsWith(10, 100, 1000), metricsWith(25, 130, 1900)}, dump: fakeDump, replicaN: 3,
		own: Owners{Levels: map[string]string{long: "RequestPriority/tenant"}, Schemas: map[string]string{long: "FlowSchema/tenant"}}}
	var r Report
	if err := json.Unmarshal([]byte(runOnce(t, src, "json")), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.FlowSchemas) != 2 {
		t.Fatalf("flow schemas %+v: want the two with traffic (idle left out)", r.FlowSchemas)
	}
	first := r.FlowSchemas[0]
	if first.Name != long || first.Source != "FlowSchema/tenant" || first.Rejected.Total != 15 || first.Rejected.QueueFull != 15 {
		t.Errorf("first row = %+v, want the tenant with 15 queue-full rejections", first)
	}
	if first.Dispatched != 30 || first.Queued != 1 || first.SeatsInUse != 2 {
		t.Errorf("tenant traffic = %+v", first.Traffic)
	}
	if want := 15 / r.Window.Seconds; r.Window.Seconds <= 0 || first.RejectedPerSecond < want*0.9 || first.RejectedPerSecond > want*1.1 {
		t.Errorf("rejected/s = %v over %vs, want about %v", first.RejectedPerSecond, r.Window.Seconds, want)
	}
	var gd *Level
	for i := range r.Levels {
		if r.Levels[i].Name == "global-default" {
			gd = &r.Levels[i]
		}
	}
	if gd == nil || gd.NominalSeats != 49 || gd.LendableSeats != 24 || gd.BorrowedSeats != -19 || gd.Dispatched != 900 {
		t.Errorf("global-default level = %+v", gd)
	}
	if r.Levels[0].Name != long || r.Levels[0].Source != "RequestPriority/tenant" {
		t.Errorf("first level %q (%q), want the rejecting tenant's", r.Levels[0].Name, r.Levels[0].Source)
	}
	if r.Replicas != 3 || !strings.Contains(r.ReplicaNote, "3 kube-apiserver replicas") {
		t.Errorf("replicas %d, note %q", r.Replicas, r.ReplicaNote)
	}
	if len(r.Flows) != 2 || r.Flows[0].Distinguisher != "tenant-a" || r.Flows[0].Queued != 2 || r.Flows[0].Executing != 1 ||
		len(r.Flows[0].Users) != 1 || r.Flows[0].Users[0] != "alice" {
		t.Errorf("flows = %+v", r.Flows)
	}
}

func TestReportYAMLAndWarnings(t *testing.T) {
	src := &fakeSource{metrics: []string{metricsWith(0, 0, 0), metricsWith(0, 0, 1)}, dumpErr: errors.New("forbidden")}
	var r Report
	if err := yaml.Unmarshal([]byte(runOnce(t, src, "yaml")), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "forbidden") || r.Flows == nil {
		t.Errorf("warnings %q, flows %v: want the dump's error and an empty list", r.Warnings, r.Flows)
	}
	// No rejections: the tenant with a request queued comes before global-default.
	if len(r.FlowSchemas) != 2 || r.FlowSchemas[1].Name != "global-default" || r.FlowSchemas[1].Dispatched != 1 {
		t.Errorf("flow schemas = %+v", r.FlowSchemas)
	}
}

func TestTableFits120Columns(t *testing.T) {
	long := "apf-a-tenant-with-a-very-long-flowschema-name-that-is-cut"
	src := &fakeSource{metrics: []string{metricsWith(10, 100, 1000), metricsWith(999999, 9999999, 99999999)}, dump: fakeDump, replicaN: 2,
		own: Owners{Schemas: map[string]string{long: "FlowSchema/" + strings.Repeat("x", 200)}}}
	out := runOnce(t, src, "")
	for i, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > maxWidth {
			t.Errorf("line %d has %d columns: %q", i+1, n, l)
		}
	}
	for _, want := range []string{"PRIORITY LEVEL", "FLOWSCHEMA", "afs/xxx", "REJ/S", "NOTE: 2 kube-apiserver replicas", "tenant-a"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, o := range []options{
		{interval: time.Second, output: "wide", limit: 1},
		{interval: time.Second, watch: true, once: true, limit: 1},
		{interval: time.Millisecond, limit: 1},
		{interval: time.Second, limit: 0},
	} {
		if err := o.validate(); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if err := (&options{interval: time.Second, output: "json", limit: 1}).validate(); err != nil {
		t.Error(err)
	}
}

// TestWatchRefreshesUntilInterrupted: with watch, each interval prints a view over the last
// window, until the context ends, which is a normal end.
func TestWatchRefreshesUntilInterrupted(t *testing.T) {
	src := &fakeSource{metrics: []string{metricsWith(0, 0, 0), metricsWith(1, 1, 1), metricsWith(3, 2, 2), metricsWith(3, 2, 2)}, dump: fakeDump}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var out bytes.Buffer
	o := options{interval: 100 * time.Millisecond, output: "yaml", limit: 10}
	if err := o.run(ctx, []source{src}, &out, true); err != nil {
		t.Fatalf("watch ended with %v", err)
	}
	docs := strings.Split(out.String(), "---\n")
	if len(docs) < 2 {
		t.Fatalf("%d views in %s, want at least 2:\n%s", len(docs), "1s", out.String())
	}
	var first, second Report
	if err := yaml.Unmarshal([]byte(docs[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(docs[1]), &second); err != nil {
		t.Fatal(err)
	}
	// Each view counts its own window: 1 rejection, then 2.
	if first.FlowSchemas[0].Rejected.Total != 1 || second.FlowSchemas[0].Rejected.Total != 2 {
		t.Errorf("rejections per view: %d, %d; want 1, 2", first.FlowSchemas[0].Rejected.Total, second.FlowSchemas[0].Rejected.Total)
	}
}

// TestReplicaServersAreSummed: reading two replicas sums their counts and their flows, and the
// report says which replicas it summed and that a third one announced is missing.
func TestReplicaServersAreSummed(t *testing.T) {
	a := &fakeSource{metrics: []string{metricsWith(10, 100, 1000), metricsWith(25, 130, 1900)}, dump: fakeDump, replicaN: 3}
	b := &fakeSource{metrics: []string{metricsWith(0, 0, 0), metricsWith(5, 10, 10)}, dump: fakeDump, replicaN: 3}
	var out bytes.Buffer
	o := options{interval: 100 * time.Millisecond, output: "json", limit: 10}
	if err := o.run(context.Background(), []source{a, b}, &out, false); err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if got := r.FlowSchemas[0].Rejected.Total; got != 20 {
		t.Errorf("rejections summed over two replicas = %d, want 15 + 5", got)
	}
	if len(r.ReadFrom) != 2 || !strings.Contains(r.ReplicaNote, "the cluster announces 3") {
		t.Errorf("readFrom %v, note %q", r.ReadFrom, r.ReplicaNote)
	}
	if r.Flows[0].Queued != 4 {
		t.Errorf("flows of both replicas: %+v, want tenant-a's 2 queued twice", r.Flows[0])
	}
}

func TestReplicaServersMustBeHTTPS(t *testing.T) {
	for _, bad := range []string{"10.0.0.1:6443", "http://10.0.0.1:6443", "https://"} {
		o := options{replicaServers: []string{bad}}
		if _, err := o.sources(&rest.Config{Host: "https://lb:6443"}); err == nil || !strings.Contains(err.Error(), "https://host:port") {
			t.Errorf("--replica-servers %q: %v", bad, err)
		}
	}
	o := options{replicaServers: []string{"https://10.0.0.1:6443", "https://10.0.0.2:6443"}}
	srcs, err := o.sources(&rest.Config{Host: "https://lb:6443", BearerToken: "t"})
	if err != nil || len(srcs) != 2 || srcs[1].server() != "https://10.0.0.2:6443" {
		t.Errorf("sources = %v, %v", srcs, err)
	}
}

// TestNarrowRoleDegradesClearly: with the narrow role apf-top-metrics the debug endpoint is
// forbidden; top still shows the levels and FlowSchemas, and says which columns are missing
// and why, in the table (every line within 120 columns) and in JSON.
func TestNarrowRoleDegradesClearly(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{}, "", errors.New(`User "viewer" cannot get path "/debug/api_priority_and_fairness/dump_requests"`))
	src := func() *fakeSource {
		return &fakeSource{metrics: []string{metricsWith(0, 0, 0), metricsWith(5, 10, 20)},
			dumpErr: fmt.Errorf("GET dump: %w", forbidden)}
	}
	table := runOnce(t, src(), "table")
	for _, want := range []string{"FLOWS table (DISTINGUISHER, USERS, QUEUED, EXEC) is not shown", "apf-top-metrics",
		"user and path", "global-default", "(not shown: the FLOWS table"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	for _, l := range strings.Split(table, "\n") {
		if n := utf8.RuneCountInString(l); n > maxWidth {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	var r Report
	if err := json.Unmarshal([]byte(runOnce(t, src(), "json")), &r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.FlowsMissing, "apf-top-metrics") || len(r.Flows) != 0 || len(r.FlowSchemas) == 0 || len(r.Levels) == 0 {
		t.Errorf("JSON: flowsMissing %q, %d flows, %d FlowSchemas, %d levels; want the reason, no flows, the rest",
			r.FlowsMissing, len(r.Flows), len(r.FlowSchemas), len(r.Levels))
	}
}
