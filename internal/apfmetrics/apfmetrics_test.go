package apfmetrics

import (
	"math"
	"testing"
	"time"
)

// metricsText is a cut of kube-apiserver 1.36's /metrics with a family of another prefix
// whose line the text parser would refuse (it must never be parsed).
const metricsText = `# HELP apiserver_flowcontrol_nominal_limit_seats [BETA] Nominal number of execution seats configured for each priority level
# TYPE apiserver_flowcontrol_nominal_limit_seats gauge
apiserver_flowcontrol_nominal_limit_seats{priority_level="apf-tiny"} 2
apiserver_flowcontrol_nominal_limit_seats{priority_level="exempt"} 0
# TYPE apiserver_flowcontrol_lower_limit_seats gauge
apiserver_flowcontrol_lower_limit_seats{priority_level="apf-tiny"} 1
# TYPE apiserver_flowcontrol_current_limit_seats gauge
apiserver_flowcontrol_current_limit_seats{priority_level="apf-tiny"} 5
# TYPE apiserver_flowcontrol_rejected_requests_total counter
apiserver_flowcontrol_rejected_requests_total{flow_schema="apf-tiny",priority_level="apf-tiny",reason="queue-full"} 7
apiserver_flowcontrol_rejected_requests_total{flow_schema="apf-tiny",priority_level="apf-tiny",reason="time-out"} 3
# TYPE apiserver_flowcontrol_dispatched_requests_total counter
apiserver_flowcontrol_dispatched_requests_total{flow_schema="apf-tiny",priority_level="apf-tiny"} 100
# TYPE apiserver_flowcontrol_current_inqueue_requests gauge
apiserver_flowcontrol_current_inqueue_requests{flow_schema="apf-tiny",priority_level="apf-tiny"} 4
# TYPE apiserver_flowcontrol_request_wait_duration_seconds histogram
apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute="true",flow_schema="apf-tiny",priority_level="apf-tiny",le="0.1"} 90
apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute="true",flow_schema="apf-tiny",priority_level="apf-tiny",le="1"} 100
apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute="true",flow_schema="apf-tiny",priority_level="apf-tiny",le="+Inf"} 100
apiserver_flowcontrol_request_wait_duration_seconds_sum{execute="true",flow_schema="apf-tiny",priority_level="apf-tiny"} 5
apiserver_flowcontrol_request_wait_duration_seconds_count{execute="true",flow_schema="apf-tiny",priority_level="apf-tiny"} 100
# TYPE other_metric gauge
other_metric{broken 1
`

func TestParseKeepsOnlyThePrefix(t *testing.T) {
	f, err := Parse([]byte(metricsText), Prefix)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f["other_metric"]; ok {
		t.Error("a family without the prefix was parsed")
	}
	if got := f.ByLabel(NominalSeatsMetric, LevelLabel)["apf-tiny"]; got != 2 {
		t.Errorf("nominal seats of apf-tiny = %v, want 2", got)
	}
	if _, err := Parse([]byte(metricsText)); err == nil {
		t.Error("without a prefix the broken family must fail the parse")
	}
}

func TestSnapshotSince(t *testing.T) {
	f, err := Parse([]byte(metricsText), Prefix)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	cur := NewSnapshot(f, now)
	k := Key{PriorityLevel: "apf-tiny", FlowSchema: "apf-tiny"}
	if lv := cur.Levels["apf-tiny"]; lv != (LevelSeats{Nominal: 2, Lower: 1, CurrentLimit: 5}) {
		t.Errorf("level seats = %+v", lv)
	}
	prev := &Snapshot{Time: now.Add(-time.Second), Flows: map[Key]*Flow{k: {Dispatched: 40, Rejected: map[string]float64{ReasonQueueFull: 2, ReasonTimeOut: 5}}}}
	d := cur.Since(prev)[k]
	if d.Dispatched != 60 || d.Rejected[ReasonQueueFull] != 5 {
		t.Errorf("delta = %+v, want 60 dispatched and 5 queue-full", d)
	}
	// time-out went from 5 to 3: a restart, so the 3 since it count.
	if d.Rejected[ReasonTimeOut] != 3 || d.RejectedTotal() != 8 {
		t.Errorf("rejections after a counter reset = %v (total %v), want 3 (8)", d.Rejected[ReasonTimeOut], d.RejectedTotal())
	}
	if d.InQueue != 4 {
		t.Errorf("in queue = %v, want the later gauge 4", d.InQueue)
	}
}

func TestQuantile(t *testing.T) {
	h := Histogram{Bounds: []float64{0.1, 1, math.Inf(1)}, Counts: []float64{90, 100, 100}, Count: 100}
	// rank 99 lies in (0.1, 1], 9 of its 10 observations: 0.1 + 0.9*0.9.
	if v, ok := h.Quantile(0.99); !ok || math.Abs(v-0.91) > 1e-9 {
		t.Errorf("p99 = %v, %v; want 0.91", v, ok)
	}
	if v, _ := h.Quantile(0.5); math.Abs(v-0.1*50/90) > 1e-9 {
		t.Errorf("p50 = %v, want %v", v, 0.1*50/90)
	}
	inf := Histogram{Bounds: []float64{1, math.Inf(1)}, Counts: []float64{0, 10}, Count: 10}
	if v, _ := inf.Quantile(0.99); v != 1 {
		t.Errorf("p99 above the last finite bound = %v, want 1", v)
	}
	if _, ok := (Histogram{}).Quantile(0.99); ok {
		t.Error("an empty histogram has no quantile")
	}
	prev := Histogram{Bounds: []float64{0.1, 1, math.Inf(1)}, Counts: []float64{80, 80, 80}, Count: 80}
	h.Sum, prev.Sum = 30, 12
	d := h.Sub(prev)
	if d.Count != 20 || d.Counts[0] != 10 || d.Counts[1] != 20 || d.Sum != 18 {
		t.Errorf("h - prev = %+v", d)
	}
}

// dumpText is dump_requests as kube-apiserver writes it (comma, tab writer padding), with an
// extra unknown column and a short row.
const dumpText = `PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, FlowDistingsher, ArriveTime,                     UserName, Extra
apf-tiny,          apf-tiny,       0,          0,                   bob,             2026-11-26T18:00:00.1Z,         bob,      x,y
apf-tiny,          apf-tiny,       0,          -1,                  bob,             2026-11-26T18:00:00.2Z,         bob,      z

workload-low,      service-accounts
`

func TestParseDump(t *testing.T) {
	rows := ParseDump([]byte(dumpText))
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3: %v", len(rows), rows)
	}
	if rows[0]["FlowDistingsher"] != "bob" || rows[0]["RequestIndexInQueue"] != "0" || rows[0]["Extra"] != "x,y" {
		t.Errorf("row 0 = %v", rows[0])
	}
	if rows[1]["RequestIndexInQueue"] != "-1" {
		t.Errorf("row 1 = %v", rows[1])
	}
	if rows[2]["FlowSchemaName"] != "service-accounts" || rows[2]["UserName"] != "" {
		t.Errorf("short row = %v", rows[2])
	}
	if len(ParseDump(nil)) != 0 {
		t.Error("an empty dump has rows")
	}
}

func TestMergeSumsReplicas(t *testing.T) {
	k := Key{PriorityLevel: "l", FlowSchema: "f"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	snap := func(at time.Time, nominal, dispatched, rejected float64, waits []float64) *Snapshot {
		return &Snapshot{Time: at, Levels: map[string]LevelSeats{"l": {Nominal: nominal, CurrentLimit: nominal}},
			Flows: map[Key]*Flow{k: {Dispatched: dispatched, Rejected: map[string]float64{ReasonQueueFull: rejected},
				InQueue: 1, Wait: Histogram{Bounds: []float64{0.1, math.Inf(1)}, Counts: waits, Count: waits[1]}}}}
	}
	m := Merge(snap(t0, 10, 100, 5, []float64{3, 4}), snap(t0.Add(2*time.Second), 12, 50, 7, []float64{1, 6}))
	f := m.Flows[k]
	if m.Levels["l"].Nominal != 22 || f.Dispatched != 150 || f.Rejected[ReasonQueueFull] != 12 || f.InQueue != 2 {
		t.Errorf("merged = %+v, flow %+v", m.Levels, f)
	}
	if f.Wait.Count != 10 || f.Wait.Counts[0] != 4 || f.Wait.Counts[1] != 10 {
		t.Errorf("merged wait = %+v", f.Wait)
	}
	if !m.Time.Equal(t0.Add(time.Second)) {
		t.Errorf("merged time %s, want the mean %s", m.Time, t0.Add(time.Second))
	}
	if Merge() != nil {
		t.Error("Merge() of nothing is not nil")
	}
}

// demandText is the seat-demand families as kube-apiserver 1.36 writes them: a timing-ratio
// histogram whose bucket counts are nanoseconds spent at most at each ratio (20 s in all, the
// _sum the integral of the ratio over them), and the gauges of the last 10 s period.
const demandText = `# HELP apiserver_flowcontrol_demand_seats [ALPHA] Observations, at the end of every nanosecond, of (the number of seats each priority level could use) / (nominal number of seats for that level)
# TYPE apiserver_flowcontrol_demand_seats histogram
apiserver_flowcontrol_demand_seats_bucket{priority_level="apf-tiny",le="0.2"} 4e+09
apiserver_flowcontrol_demand_seats_bucket{priority_level="apf-tiny",le="0.4"} 8e+09
apiserver_flowcontrol_demand_seats_bucket{priority_level="apf-tiny",le="0.6"} 1e+10
apiserver_flowcontrol_demand_seats_bucket{priority_level="apf-tiny",le="0.8"} 1.2e+10
apiserver_flowcontrol_demand_seats_bucket{priority_level="apf-tiny",le="1"} 1.6e+10
apiserver_flowcontrol_demand_seats_bucket{priority_level="apf-tiny",le="1.2"} 1.8e+10
apiserver_flowcontrol_demand_seats_bucket{priority_level="apf-tiny",le="1.4"} 1.9e+10
apiserver_flowcontrol_demand_seats_bucket{priority_level="apf-tiny",le="1.7"} 1.9e+10
apiserver_flowcontrol_demand_seats_bucket{priority_level="apf-tiny",le="2"} 2e+10
apiserver_flowcontrol_demand_seats_bucket{priority_level="apf-tiny",le="2.8"} 2e+10
apiserver_flowcontrol_demand_seats_bucket{priority_level="apf-tiny",le="4"} 2e+10
apiserver_flowcontrol_demand_seats_bucket{priority_level="apf-tiny",le="6"} 2e+10
apiserver_flowcontrol_demand_seats_bucket{priority_level="apf-tiny",le="+Inf"} 2e+10
apiserver_flowcontrol_demand_seats_sum{priority_level="apf-tiny"} 1.5e+10
apiserver_flowcontrol_demand_seats_count{priority_level="apf-tiny"} 2e+10
# HELP apiserver_flowcontrol_demand_seats_high_watermark [ALPHA] High watermark, over last adjustment period, of demand_seats
# TYPE apiserver_flowcontrol_demand_seats_high_watermark gauge
apiserver_flowcontrol_demand_seats_high_watermark{priority_level="apf-tiny"} 4
apiserver_flowcontrol_demand_seats_high_watermark{priority_level="no-histogram"} 9
# TYPE apiserver_flowcontrol_demand_seats_average gauge
apiserver_flowcontrol_demand_seats_average{priority_level="apf-tiny"} 1.5
# TYPE apiserver_flowcontrol_demand_seats_stdev gauge
apiserver_flowcontrol_demand_seats_stdev{priority_level="apf-tiny"} 0.5
`

func TestSnapshotDemand(t *testing.T) {
	f, err := Parse([]byte(demandText), Prefix)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSnapshot(f, time.Now())
	if _, ok := s.Demand["no-histogram"]; ok {
		t.Error("a level with gauges but no demand histogram has demand")
	}
	d := s.Demand["apf-tiny"]
	if d == nil {
		t.Fatalf("no demand for apf-tiny: %v", s.Demand)
	}
	if d.HighWatermark != 4 || d.Average != 1.5 || d.Stdev != 0.5 {
		t.Errorf("gauges = %+v, want 4, 1.5, 0.5", d)
	}
	if len(d.Ratio.Bounds) != 13 || d.Ratio.Count != 2e10 || d.Ratio.Counts[4] != 1.6e10 || d.Ratio.Sum != 1.5e10 {
		t.Errorf("ratio histogram = %+v", d.Ratio)
	}
	// p95: rank 0.95 x 2e10 = 1.9e10 ns, reached at le 1.4 (1.8e10 at 1.2): 1.2 + 0.2 x 1e9/1e9.
	if q, ok := d.Ratio.Quantile(0.95); !ok || math.Abs(q-1.4) > 1e-9 {
		t.Errorf("p95 ratio = %v, %v; want 1.4", q, ok)
	}
	m := Merge(s, s)
	md := m.Demand["apf-tiny"]
	if md == nil || md.Ratio.Count != 4e10 || md.Ratio.Counts[4] != 3.2e10 || md.Ratio.Sum != 3e10 || md.HighWatermark != 8 || md.Average != 3 {
		t.Errorf("merged demand = %+v", md)
	}
	if d.Ratio.Count != 2e10 {
		t.Error("Merge changed its input")
	}
}
