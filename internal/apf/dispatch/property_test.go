package dispatch_test

import (
	"context"
	"flag"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/metrics"
)

var propertyRequests = flag.Int("apf.requests", 100_000, "requests in TestPropertyRandomTraffic")

// TestPropertyRandomTraffic sends random requests (random levels, widths, cancellations, and
// schemas of older configurations) from many goroutines while another swaps configurations,
// on the real clock with a short wait limit, and checks: every request ends exactly once, exec
// runs exactly for the executed ones, the executing width never exceeds SCL, and afterwards
// no seat, queued request, draining level, metric or goroutine is left over. Inside the
// dispatcher (CheckInvariants) it checks the borrowing limits at every dispatch and that no
// head fitting in its level's own seats and the free seats is left waiting.
func TestPropertyRandomTraffic(t *testing.T) {
	const scl = 8
	// The levels lend and borrow in different measures, and change them across configurations.
	configs := []*effective.Config{
		buildConfig(t, lvl{name: "top", level: 0},
			lvl{name: "a", level: 100, shares: 20, queues: 8, hand: 2, limit: 3, lend: ptr(50)},
			lvl{name: "b", level: 200, shares: 10, queues: 1, limit: 5, borrow: ptr(0)},
			lvl{name: "c", level: 300, shares: 5, queues: 16, hand: 3, limit: 2, lend: ptr(100), borrow: ptr(300)}),
		buildConfig(t, lvl{name: "top", level: 0},
			lvl{name: "a", level: 100, shares: 5, queues: 4, hand: 4, limit: 6, lend: ptr(25), borrow: ptr(100)}, // resized
			lvl{name: "c", level: 150, shares: 30, queues: 16, hand: 3, limit: 1}),                               // b removed, c moved up
		buildConfig(t, lvl{name: "top", level: 0},
			lvl{name: "b", level: 50, shares: 10, queues: 2, hand: 1, limit: 4, lend: ptr(100)},
			lvl{name: "d", level: 400, shares: 40, queues: 8, hand: 2, limit: 2, lend: ptr(50), borrow: ptr(50)}),
	}
	var schemas []*effective.Schema
	for _, c := range configs {
		schemas = append(schemas, c.Schemas...)
		schemas = append(schemas, c.MastersBackstop, c.CatchAll)
	}
	reg := prometheus.NewRegistry()
	goroutines := runtime.NumGoroutine()
	d := dispatch.New(configs[0], dispatch.Options{ServerConcurrencyLimit: scl, WaitLimit: 2 * time.Millisecond,
		Metrics: metrics.NewMetrics(reg)})
	checked := dispatch.CheckInvariants(d, t.Errorf)

	var inUse, maxInUse, executed, execCalls, rejected, ended, exemptExecuted atomic.Int64
	var outcomes [4]atomic.Int64
	// Configurations swap during the first 80% of the traffic; the rest runs on configs[0], so
	// its levels' counters, checked at the end, have seen traffic of every kind.
	var updates sync.WaitGroup
	var swaps atomic.Int64
	updates.Add(1)
	go func() {
		defer updates.Done()
		rng := rand.New(rand.NewPCG(9, 9))
		for ended.Load() < int64(*propertyRequests)*8/10 {
			time.Sleep(200 * time.Microsecond)
			d.Update(configs[rng.IntN(len(configs))])
			swaps.Add(1)
		}
		d.Update(configs[0])
	}()

	const workers = 64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		n := *propertyRequests / workers
		if w < *propertyRequests%workers {
			n++
		}
		go func(seed uint64, n int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 1))
			for i := 0; i < n; i++ {
				s := schemas[rng.IntN(len(schemas))]
				r := &dispatch.Request{Schema: s, FlowHash: rng.Uint64() % 32, Width: 1 + rng.IntN(2)}
				ctx, cancel := context.WithCancel(context.Background())
				if rng.IntN(10) == 0 {
					time.AfterFunc(time.Duration(rng.IntN(500))*time.Microsecond, cancel)
				}
				var calls int32
				exempt := s.Priority.Exempt() // level-0 is "top" in every configuration
				out := d.Handle(ctx, r, func() {
					calls++
					execCalls.Add(1)
					if exempt {
						exemptExecuted.Add(1)
					} else {
						now := inUse.Add(int64(r.Width))
						for m := maxInUse.Load(); now > m && !maxInUse.CompareAndSwap(m, now); m = maxInUse.Load() {
						}
						defer inUse.Add(-int64(r.Width))
					}
					for k := rng.IntN(4); k > 0; k-- {
						runtime.Gosched()
					}
					if rng.IntN(50) == 0 {
						time.Sleep(100 * time.Microsecond)
					}
				})
				cancel()
				ended.Add(1)
				outcomes[out].Add(1)
				switch {
				case out == dispatch.Executed && calls == 1:
					executed.Add(1)
				case out != dispatch.Executed && calls == 0 && out.Reason() != "":
					rejected.Add(1)
				default:
					t.Errorf("outcome %v with exec called %d times", out, calls)
				}
			}
		}(uint64(w), n)
	}
	wg.Wait()
	updates.Wait()

	total := int64(*propertyRequests)
	if executed.Load()+rejected.Load() != total || execCalls.Load() != executed.Load() {
		t.Fatalf("%d requests: %d executed, %d rejected, exec called %d times", total, executed.Load(), rejected.Load(), execCalls.Load())
	}
	if m := maxInUse.Load(); m > scl {
		t.Fatalf("executing width reached %d > SCL %d", m, scl)
	}
	var counts [4]int64
	for i := range outcomes {
		counts[i] = outcomes[i].Load()
	}
	t.Logf("%d requests, %d configuration swaps: executed %d, queue-full %d, timeout %d, cancelled %d; max width in use %d",
		total, swaps.Load(), counts[0], counts[1], counts[2], counts[3], maxInUse.Load())
	t.Logf("invariants checked at %d dispatches (%d beyond the level's minCL) and %d dispatching rounds",
		checked.Dispatches.Load(), checked.Borrowed.Load(), checked.Rounds.Load())
	if checked.Dispatches.Load() != counts[dispatch.Executed]-exemptExecuted.Load() || checked.Borrowed.Load() == 0 {
		t.Errorf("the invariants were not checked at every dispatch, or nothing borrowed")
	}
	if swaps.Load() < 10 {
		t.Errorf("only %d configuration swaps during the traffic", swaps.Load())
	}
	if counts[dispatch.RejectedQueueFull] == 0 || counts[dispatch.RejectedTimeout] == 0 || counts[dispatch.RejectedCancelled] == 0 {
		t.Errorf("the traffic did not exercise every outcome: %v", counts)
	}
	assertDrained(t, d, reg, goroutines)
}

func assertDrained(t *testing.T, d *dispatch.Dispatcher, reg *prometheus.Registry, goroutines int) {
	t.Helper()
	st := d.Snapshot()
	if st.ExecutingWidth != 0 || st.Waiting != 0 {
		t.Fatalf("left over: executing width %d, waiting %d", st.ExecutingWidth, st.Waiting)
	}
	for _, l := range st.Levels {
		if l.Draining || l.ExecutingWidth != 0 || l.Waiting != 0 || len(l.Queues) != 0 || len(l.DrainingQueues) != 0 {
			t.Fatalf("level left over: %+v", l)
		}
	}
	for _, name := range []string{"apf_operator_current_executing_requests", "apf_operator_current_inqueue_requests"} {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range families {
			if mf.GetName() != name {
				continue
			}
			for _, m := range mf.GetMetric() {
				if v := m.GetGauge().GetValue(); v != 0 {
					t.Fatalf("%s%v = %v after all requests ended", name, m.GetLabel(), v)
				}
			}
		}
	}
	if n := testutil.CollectAndCount(reg, "apf_operator_dispatched_requests_total"); n == 0 {
		t.Fatal("no dispatched series")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines left, %d before:\n%s", n, goroutines, strings.TrimSpace(string(buf[:runtime.Stack(buf, true)])))
	}
}
