// Package metrics defines the Prometheus metrics of the flow-control engine: the six metrics of
// the proposal's "Prometheus Metrics" section, labelled by priority level and FlowSchema, plus
// the assured concurrency value of each level.
//
// Every metric, with its labels:
//
//	apf_operator_rejected_requests_total{priority_level, flow_schema, reason}
//	    counter: requests rejected; reason is queue-full (the arriving request found its queue
//	    full), timeout (it waited the wait limit) or cancelled (its client gave up while it
//	    waited).
//	apf_operator_current_inqueue_requests{priority_level, flow_schema}
//	    gauge: requests waiting in a queue.
//	apf_operator_current_executing_requests{priority_level, flow_schema}
//	    gauge: requests executing (exempt requests included).
//	apf_operator_dispatched_requests_total{priority_level, flow_schema}
//	    counter: requests dispatched for execution (exempt requests included).
//	apf_operator_request_wait_duration_seconds{priority_level, flow_schema}
//	    histogram: time from arrival to dispatch of each dispatched request (0 when it did not
//	    wait).
//	apf_operator_request_execution_duration_seconds{priority_level, flow_schema}
//	    histogram: service time of each executed request.
//	apf_operator_assured_concurrency_limit{priority_level}
//	    gauge: the level's assured concurrency value ACV, in width units.
//	apf_operator_lower_limit_seats{priority_level}
//	    gauge: the seats the level keeps for itself (ACV less what it may lend), as
//	    kube-apiserver's apiserver_flowcontrol_lower_limit_seats.
//	apf_operator_upper_limit_seats{priority_level}
//	    gauge: the most seats it may occupy by borrowing (ACV plus its borrowing limit), as
//	    kube-apiserver's apiserver_flowcontrol_upper_limit_seats.
//
// # Cost
//
// The request metrics are recorded in a Flow, the counters of one (priority level, FlowSchema)
// pair, which the dispatcher resolves once per configuration: the request path never looks a
// label up. A request that does not wait costs three atomic additions (a wait bucket, an
// execution bucket and the execution sum); the dispatched counter is the wait histogram's count
// and the executing gauge is the number dispatched minus the number finished, so they cost
// nothing. client_golang's own vectors cost about four times as much per request (a
// floating-point compare-and-swap loop per sum and gauge, and its hot/cold count swapping), more
// than the rest of the request path. The collector turns the counters into client_golang const
// metrics at scrape time.
//
// # Deleted series
//
// The series of a FlowSchema or level that left the configuration are deleted once nothing
// can update them any more: a Flow from ConfiguredFlow or TransientFlow counts the
// configurations that name its pair and the requests in flight (waiting or executing) that
// hold it, and leaves the scrape with its last holder (see series.go). Its gauges are zero
// then, and a record made by mistake on a deleted Flow shows nowhere; the pair, if it comes
// back, starts a new series from zero, which Prometheus reads as a counter reset. A Flow
// obtained by Flow alone is kept for good.
//
// NewMetrics registers with the registerer it is given; nothing registers into a global
// registry.
package metrics

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes every metric name.
const Namespace = "apf_operator"

// Label names.
const (
	LabelPriorityLevel = "priority_level"
	LabelFlowSchema    = "flow_schema"
	LabelReason        = "reason"
)

// Rejection reasons, the values of the reason label.
const (
	ReasonQueueFull = "queue-full"
	ReasonTimeout   = "timeout"
	ReasonCancelled = "cancelled"
)

// WaitBuckets are the upper bounds of the wait-duration histogram's buckets, in seconds (the
// default wait limit is 15 s).
var WaitBuckets = []float64{0.001, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30}

// ExecutionBuckets are the upper bounds of the execution-duration histogram's buckets, in
// seconds (the default request timeout is 60 s).
var ExecutionBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Metrics holds the engine's metrics. A nil *Metrics is valid and records nothing.
type Metrics struct {
	flows   *flowCollector
	assured *prometheus.GaugeVec
	lower   *prometheus.GaugeVec
	upper   *prometheus.GaugeVec
}

// NewMetrics creates the metrics and registers them with reg (none when reg is nil). If they
// are already registered with reg (another dispatcher of the same process), the registered
// ones are shared instead of failing. It panics, as prometheus.MustRegister does, if reg holds
// a different metric under one of these names: a wiring bug found at startup.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		flows: newFlowCollector(),
		assured: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace,
			Name: "assured_concurrency_limit",
			Help: "Assured concurrency value (ACV) of a priority level, in width units."},
			[]string{LabelPriorityLevel}),
		lower: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace,
			Name: "lower_limit_seats",
			Help: "Seats a priority level keeps for itself: its ACV less what it may lend, in width units."},
			[]string{LabelPriorityLevel}),
		upper: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace,
			Name: "upper_limit_seats",
			Help: "Most seats a priority level may occupy by borrowing: its ACV plus its borrowing limit, in width units."},
			[]string{LabelPriorityLevel}),
	}
	if reg != nil {
		m.flows = register(reg, m.flows)
		m.assured = register(reg, m.assured)
		m.lower = register(reg, m.lower)
		m.upper = register(reg, m.upper)
	}
	return m
}

// register registers c, or returns the collector already registered in its place.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(err) // another metric with the same name: a programming error
}

// Flow returns the counters of requests of FlowSchema flowSchema at the level named
// priorityLevel, creating them on first use; the same pair always gets the same Flow, so
// counters survive configuration changes. It returns nil, a Flow that records nothing, when m
// is nil. A Flow obtained only here is kept for good; one obtained by ConfiguredFlow or
// TransientFlow is deleted once nothing holds it (see series.go).
func (m *Metrics) Flow(priorityLevel, flowSchema string) *Flow {
	if m == nil {
		return nil
	}
	return m.flows.get(priorityLevel, flowSchema)
}

// SetLimits records the concurrency limits of a level: its ACV and the lower and upper limits
// of its seats with lending and borrowing. It does nothing when m is nil.
func (m *Metrics) SetLimits(priorityLevel string, acv, lower, upper int) {
	if m == nil {
		return
	}
	m.assured.WithLabelValues(priorityLevel).Set(float64(acv))
	m.lower.WithLabelValues(priorityLevel).Set(float64(lower))
	m.upper.WithLabelValues(priorityLevel).Set(float64(upper))
}

// ForgetLevel removes the limit series of a level that is no longer configured. The request
// series of its flows leave once nothing holds them (see series.go).
func (m *Metrics) ForgetLevel(priorityLevel string) {
	if m == nil {
		return
	}
	m.assured.DeleteLabelValues(priorityLevel)
	m.lower.DeleteLabelValues(priorityLevel)
	m.upper.DeleteLabelValues(priorityLevel)
}

type flowKey struct{ level, schema string }

// flowCollector exports every Flow's counters.
type flowCollector struct {
	rejected, inQueue, executing, dispatched, wait, execution *prometheus.Desc

	mu    sync.Mutex
	flows map[flowKey]*Flow
}

func newFlowCollector() *flowCollector {
	flow := []string{LabelPriorityLevel, LabelFlowSchema}
	desc := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
	}
	return &flowCollector{
		rejected: desc("rejected_requests_total",
			"Requests rejected by flow control, by reason: queue-full, timeout or cancelled.",
			[]string{LabelPriorityLevel, LabelFlowSchema, LabelReason}),
		inQueue:    desc("current_inqueue_requests", "Requests waiting in a flow-control queue.", flow),
		executing:  desc("current_executing_requests", "Requests executing, admitted by flow control.", flow),
		dispatched: desc("dispatched_requests_total", "Requests dispatched for execution by flow control.", flow),
		wait:       desc("request_wait_duration_seconds", "Time a dispatched request waited in its queue.", flow),
		execution:  desc("request_execution_duration_seconds", "Service time of a request admitted by flow control.", flow),
		flows:      map[flowKey]*Flow{},
	}
}

func (c *flowCollector) get(level, schema string) *Flow {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.getLocked(level, schema)
}

func (c *flowCollector) getLocked(level, schema string) *Flow {
	k := flowKey{level, schema}
	f := c.flows[k]
	if f == nil {
		f = newFlow(level, schema)
		c.flows[k] = f
	}
	return f
}

// Describe implements prometheus.Collector.
func (c *flowCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.rejected, c.inQueue, c.executing, c.dispatched, c.wait, c.execution} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *flowCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	flows := make([]*Flow, 0, len(c.flows))
	var unused []*Flow
	for _, f := range c.flows {
		if f.unused() {
			unused = append(unused, f)
		} else {
			flows = append(flows, f)
		}
	}
	c.mu.Unlock()
	for _, f := range unused {
		if !c.deleteIfUnused(f) {
			flows = append(flows, f)
		}
	}
	for _, f := range flows {
		if !f.Deleted() {
			f.collect(c, ch)
		}
	}
}
