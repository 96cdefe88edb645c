package top

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// Report is what top shows: a stable structure for -o json|yaml. Counts are over the window
// between two reads of kube-apiserver's /metrics; gauges are the second read's.
type Report struct {
	// Server is the API server address the view came through.
	Server string `json:"server"`
	// Window is the sampling window.
	Window Window `json:"window"`
	// Replicas is how many kube-apiserver replicas the cluster announces (0: unknown);
	// ReplicaNote says which of them this view covers.
	Replicas    int    `json:"replicas"`
	ReplicaNote string `json:"replicaNote,omitempty"`
	// ReadFrom are the replicas' addresses whose counts are summed (--replica-servers); empty
	// when the view is of the one replica Server reached.
	ReadFrom []string `json:"readFrom,omitempty"`
	// Levels are kube-apiserver's priority levels, busiest first.
	Levels []Level `json:"levels"`
	// FlowSchemas are kube-apiserver's FlowSchemas that saw traffic, most rejected first.
	FlowSchemas []FlowSchema `json:"flowSchemas"`
	// Flows are the flows (FlowSchema and distinguisher) with requests queued or executing at
	// the second read, most queued first.
	Flows []Flow `json:"flows"`
	// FlowsMissing says why Flows is empty because the debug endpoint could not be read (for
	// example with the narrow role apf-top-metrics); "" when it was read.
	FlowsMissing string `json:"flowsMissing,omitempty"`
	// Warnings are what could not be read (a forbidden debug endpoint, for example).
	Warnings []string `json:"warnings,omitempty"`
}

// Window is the time between the two reads of /metrics.
type Window struct {
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Seconds float64   `json:"seconds"`
}

// Rejected counts rejections in the window by reason (kube-apiserver's reason label).
type Rejected struct {
	QueueFull        int64 `json:"queueFull"`
	TimeOut          int64 `json:"timeOut"`
	ConcurrencyLimit int64 `json:"concurrencyLimit"`
	Cancelled        int64 `json:"cancelled"`
	Total            int64 `json:"total"`
}

// Traffic is what a level or a FlowSchema did in the window.
type Traffic struct {
	SeatsInUse int64 `json:"seatsInUse"`
	Executing  int64 `json:"executing"`
	Queued     int64 `json:"queued"`
	// Dispatched is the number of requests dispatched in the window; DispatchedPerSecond
	// and RejectedPerSecond are rates over it.
	Dispatched          int64    `json:"dispatched"`
	DispatchedPerSecond float64  `json:"dispatchedPerSecond"`
	Rejected            Rejected `json:"rejected"`
	RejectedPerSecond   float64  `json:"rejectedPerSecond"`
	// WaitP99Seconds is the 99th percentile of the queue wait of the window's requests,
	// interpolated in kube-apiserver's histogram buckets; absent without requests.
	WaitP99Seconds *float64 `json:"waitP99Seconds,omitempty"`
}

// Level is one native priority level.
type Level struct {
	Name string `json:"name"`
	// Source is the operator's object projected onto it ("RequestPriority/<name>"), or ""
	// for kube-apiserver's own levels.
	Source string `json:"source,omitempty"`
	// NominalSeats, LendableSeats (nominal minus lower limit) and BorrowedSeats (current
	// limit minus nominal; negative when lending) are kube-apiserver's seat gauges.
	NominalSeats  int64 `json:"nominalSeats"`
	LendableSeats int64 `json:"lendableSeats"`
	BorrowedSeats int64 `json:"borrowedSeats"`
	Traffic       `json:",inline"`
}

// FlowSchema is one native FlowSchema's traffic.
type FlowSchema struct {
	Name string `json:"name"`
	// Source is the operator's object projected onto it ("FlowSchema/<name>"), or "".
	Source        string `json:"source,omitempty"`
	PriorityLevel string `json:"priorityLevel"`
	Traffic       `json:",inline"`
}

// Flow is one flow's requests at the second read, from dump_requests.
type Flow struct {
	FlowSchema    string `json:"flowSchema"`
	Source        string `json:"source,omitempty"`
	PriorityLevel string `json:"priorityLevel"`
	// Distinguisher is the flow distinguisher (user or namespace; "" without one).
	Distinguisher string `json:"distinguisher"`
	// Users are the users of the flow's requests (at most three, sorted).
	Users     []string `json:"users,omitempty"`
	Queued    int64    `json:"queued"`
	Executing int64    `json:"executing"`
}

// Owners map native names to the operator's objects ("Kind/name").
type Owners struct {
	Levels, Schemas map[string]string
}

// build computes the levels and FlowSchemas of a report from two snapshots.
func build(r *Report, prev, cur *apfmetrics.Snapshot, owners Owners) {
	seconds := cur.Time.Sub(prev.Time).Seconds()
	r.Window = Window{Start: prev.Time.UTC(), End: cur.Time.UTC(), Seconds: round(seconds, 3)}
	levels := map[string]*Level{}
	for name, seats := range cur.Levels {
		levels[name] = &Level{Name: name, Source: owners.Levels[name], NominalSeats: int64(seats.Nominal),
			LendableSeats: int64(seats.Nominal - seats.Lower), BorrowedSeats: int64(seats.CurrentLimit - seats.Nominal)}
	}
	levelWait := map[string]apfmetrics.Histogram{}
	for k, d := range cur.Since(prev) {
		lv := levels[k.PriorityLevel]
		if lv == nil {
			lv = &Level{Name: k.PriorityLevel, Source: owners.Levels[k.PriorityLevel]}
			levels[k.PriorityLevel] = lv
		}
		lv.add(d)
		levelWait[k.PriorityLevel] = levelWait[k.PriorityLevel].Plus(d.Wait)
		if k.FlowSchema == "" || d.Dispatched+d.RejectedTotal()+d.InQueue+d.Executing == 0 {
			continue
		}
		fs := FlowSchema{Name: k.FlowSchema, Source: owners.Schemas[k.FlowSchema], PriorityLevel: k.PriorityLevel}
		fs.add(d)
		fs.finish(seconds, d.Wait)
		r.FlowSchemas = append(r.FlowSchemas, fs)
	}
	for name, lv := range levels {
		lv.finish(seconds, levelWait[name])
		r.Levels = append(r.Levels, *lv)
	}
	slices.SortFunc(r.Levels, func(a, b Level) int { return busier(a.Traffic, b.Traffic, a.Name, b.Name) })
	slices.SortFunc(r.FlowSchemas, func(a, b FlowSchema) int { return busier(a.Traffic, b.Traffic, a.Name, b.Name) })
}

// busier orders the most throttled first: rejections, then queued, then dispatched, then name.
func busier(a, b Traffic, an, bn string) int {
	return cmp.Or(cmp.Compare(b.Rejected.Total, a.Rejected.Total), cmp.Compare(b.Queued, a.Queued),
		cmp.Compare(b.Dispatched, a.Dispatched), cmp.Compare(b.SeatsInUse, a.SeatsInUse), cmp.Compare(an, bn))
}

// add accumulates one (level, FlowSchema) delta.
func (t *Traffic) add(d apfmetrics.FlowDelta) {
	t.SeatsInUse += int64(d.ExecutingSeats)
	t.Executing += int64(d.Executing)
	t.Queued += int64(d.InQueue)
	t.Dispatched += int64(math.Round(d.Dispatched))
	for reason, v := range d.Rejected {
		n := int64(math.Round(v))
		switch reason {
		case apfmetrics.ReasonQueueFull:
			t.Rejected.QueueFull += n
		case apfmetrics.ReasonTimeOut:
			t.Rejected.TimeOut += n
		case apfmetrics.ReasonConcurrencyLimit:
			t.Rejected.ConcurrencyLimit += n
		case apfmetrics.ReasonCancelled:
			t.Rejected.Cancelled += n
		}
		t.Rejected.Total += n
	}
}

// finish computes the rates and the wait percentile.
func (t *Traffic) finish(seconds float64, wait apfmetrics.Histogram) {
	if seconds > 0 {
		t.DispatchedPerSecond = round(float64(t.Dispatched)/seconds, 2)
		t.RejectedPerSecond = round(float64(t.Rejected.Total)/seconds, 2)
	}
	if p, ok := wait.Quantile(0.99); ok {
		p = round(p, 6)
		t.WaitP99Seconds = &p
	}
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
