package dispatch_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/metrics"
)

// churnConfig is generation i of a configuration where everything but the pair (stable,
// stable) is renamed: level a-i and schema s-i; level b-(i mod 7) with schema t-(i mod 5), so
// that names come back while their old series may still be held; schema ex-i on the exempt
// level.
func churnConfig(t testing.TB, i int) *effective.Config {
	t.Helper()
	rp := func(name string, level int32, queues int32) flowv1.RequestPriority {
		spec := flowv1.RequestPrioritySpec{PriorityLevel: level, AssuredConcurrencyShares: ptr(10),
			QueuesPerWidth: ptr(queues), QueueLengthLimit: ptr(2)}
		if queues > 1 {
			spec.HandSize = ptr(2)
		}
		return flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	}
	fs := func(name, priority string, matching int32) flowv1.FlowSchema {
		return flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.FlowSchemaSpec{
			MatchingPriority: matching, RequestPriority: flowv1.RequestPriorityReference{Name: priority},
			Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{}}}}}
	}
	a, b := fmt.Sprintf("a-%d", i), fmt.Sprintf("b-%d", i%7)
	cfg := effective.Compute(
		[]flowv1.RequestPriority{rp("stable", 100, 4), rp(a, 200, 4), rp(b, 300, 1)},
		[]flowv1.FlowSchema{fs("stable", "stable", 100), fs(fmt.Sprintf("s-%d", i), a, 200),
			fs(fmt.Sprintf("t-%d", i%5), b, 300), fs(fmt.Sprintf("ex-%d", i), effective.BackstopExemptName, 400)})
	for name, st := range cfg.FlowSchemaStatus {
		if !st.InEffect {
			t.Fatalf("FlowSchema %s not in effect: %s", name, st.Message)
		}
	}
	return cfg
}

// pairsOf returns the (level, schema) pairs a configuration names.
func pairsOf(cfg *effective.Config) map[[2]string]bool {
	pairs := map[[2]string]bool{}
	for _, s := range append(append([]*effective.Schema(nil), cfg.Schemas...), cfg.MastersBackstop, cfg.CatchAll) {
		pairs[[2]string{s.Priority.Name, s.Name}] = true
	}
	return pairs
}

// flowSeries gathers reg and returns, for every (level, schema) series, the value of each
// request metric (the rejected counter by reason, as "rejected/<reason>"). It fails on a
// negative gauge.
func flowSeries(t *testing.T, reg *prometheus.Registry) map[[2]string]map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[[2]string]map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var key [2]string
			name := mf.GetName()
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case metrics.LabelPriorityLevel:
					key[0] = l.GetValue()
				case metrics.LabelFlowSchema:
					key[1] = l.GetValue()
				case metrics.LabelReason:
					name = "rejected/" + l.GetValue()
				}
			}
			if key[1] == "" {
				continue // the ACV gauge
			}
			if series[key] == nil {
				series[key] = map[string]float64{}
			}
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
			if m.GetGauge() != nil && v < 0 {
				t.Errorf("%s%v = %v", name, key, v)
			}
			series[key][name] = v
		}
	}
	return series
}

// TestSeriesChurn: 2000 Updates rename schemas and levels while 8 goroutines send requests
// that execute, wait, time out, are cancelled or find their queue full, some classified
// against older configurations. Series are deleted as they stop being used: every gathering
// finds no more than two configurations' pairs plus one per request in flight, and no
// negative gauge; at the end exactly the last configuration's pairs are left, and the series
// kept throughout counted every request of its schema.
func TestSeriesChurn(t *testing.T) {
	const workers, updates = 8, 2000
	reg := prometheus.NewRegistry()
	cfg0 := churnConfig(t, 0)
	d := dispatch.New(cfg0, dispatch.Options{ServerConcurrencyLimit: 2, WaitLimit: time.Millisecond,
		Metrics: metrics.NewMetrics(reg)})
	var cur atomic.Pointer[effective.Config]
	cur.Store(cfg0)
	var stop atomic.Bool
	var outcomes [4]atomic.Int64 // of the stable schema, by dispatch.Outcome
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { churnRequests(uint64(w), d, &cur, &stop, &outcomes) })
	}
	maxSeries := 0
	for i := 1; i <= updates; i++ {
		cfg := churnConfig(t, i)
		d.Update(cfg)
		cur.Store(cfg)
		if i%50 == 0 {
			n := len(flowSeries(t, reg))
			maxSeries = max(maxSeries, n)
			if limit := 2*len(pairsOf(cfg)) + workers; n > limit {
				t.Fatalf("after %d updates: %d series, more than two configurations' and the requests': %d", i, n, limit)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	last := churnConfig(t, updates+1)
	d.Update(last)

	series := flowSeries(t, reg)
	want := pairsOf(last)
	for key := range series {
		if !want[key] {
			t.Errorf("series %v left over; the configuration names %v", key, want)
		}
	}
	stable := series[[2]string{"stable", "stable"}]
	wantStable := map[string]float64{
		"apf_operator_dispatched_requests_total":  float64(outcomes[dispatch.Executed].Load()),
		"rejected/" + metrics.ReasonQueueFull:     float64(outcomes[dispatch.RejectedQueueFull].Load()),
		"rejected/" + metrics.ReasonTimeout:       float64(outcomes[dispatch.RejectedTimeout].Load()),
		"rejected/" + metrics.ReasonCancelled:     float64(outcomes[dispatch.RejectedCancelled].Load()),
		"apf_operator_current_executing_requests": 0,
		"apf_operator_current_inqueue_requests":   0,
	}
	for name, v := range wantStable {
		if stable[name] != v {
			t.Errorf("stable series: %s = %v, want %v", name, stable[name], v)
		}
	}
	t.Logf("at most %d series during the churn; stable schema outcomes %v", maxSeries, wantStable)
	if outcomes[dispatch.Executed].Load() == 0 || outcomes[dispatch.RejectedTimeout].Load()+
		outcomes[dispatch.RejectedQueueFull].Load() == 0 {
		t.Fatal("the churn exercised too little: no stable request executed, or none waited too long or found its queue full")
	}
}

// churnRequests sends requests until stop, each for a schema of the current configuration
// or, one in four, of the configuration it saw before; it counts the stable schema's outcomes.
func churnRequests(seed uint64, d *dispatch.Dispatcher, cur *atomic.Pointer[effective.Config],
	stop *atomic.Bool, outcomes *[4]atomic.Int64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	exec := func() {
		for range 1 + rng.IntN(4) {
			runtime.Gosched()
		}
	}
	prev := cur.Load()
	for !stop.Load() {
		cfg := cur.Load()
		if rng.IntN(4) == 0 {
			cfg = prev // classified before an Update
		}
		prev = cur.Load()
		schemas := append(append([]*effective.Schema(nil), cfg.Schemas...), cfg.MastersBackstop, cfg.CatchAll)
		s := schemas[rng.IntN(len(schemas))]
		ctx, cancel := context.WithCancel(context.Background())
		if rng.IntN(8) == 0 {
			go cancel()
		}
		o := d.Handle(ctx, &dispatch.Request{Schema: s, FlowHash: rng.Uint64(), Width: 1 + rng.IntN(2)}, exec)
		cancel()
		if s.Name == "stable" {
			outcomes[o].Add(1)
		}
	}
}
