package dispatch_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/metrics"
	"github.com/apf-operator/apf-operator/internal/apf/shufflesharding"
)

// benchConfig is the upstream comparison's shape: five limited levels of 10 shares (128
// queues, hand 6, limit 100; one with a single queue) and the exempt backstop; every level
// lends the given percentage of its ACV.
func benchConfig(b *testing.B, lend int32) *effective.Config {
	return buildConfig(b,
		lvl{name: "system-high", level: 1000, shares: 10, queues: 128, hand: 6, limit: 100, lend: ptr(lend)},
		lvl{name: "system-low", level: 2000, shares: 10, queues: 1, limit: 100, lend: ptr(lend)},
		lvl{name: "workload-high", level: 5000, shares: 10, queues: 128, hand: 6, limit: 100, lend: ptr(lend)},
		lvl{name: "workload-low", level: 9000, shares: 10, queues: 128, hand: 6, limit: 100, lend: ptr(lend)},
		lvl{name: "global-default", level: 9900, shares: 10, queues: 128, hand: 6, limit: 100, lend: ptr(lend)})
}

func benchDispatcher(b *testing.B, withMetrics, systemClock bool) (*dispatch.Dispatcher, *effective.Config) {
	cfg := benchConfig(b, 0) // workload-low may borrow 600 - 4*40 seats: more than it uses
	opts := dispatch.Options{ServerConcurrencyLimit: 600}
	if withMetrics {
		opts.Metrics = metrics.NewMetrics(prometheus.NewRegistry())
	}
	if systemClock {
		opts.Clock = dispatch.RealClock{}
	}
	return dispatch.New(cfg, opts), cfg
}

func noop() {}

// BenchmarkHandleUncontended is admit + finish of one request at a time (the fast path).
func BenchmarkHandleUncontended(b *testing.B) {
	for _, m := range []struct {
		name                 string
		metrics, systemClock bool
	}{{"metrics", true, false}, {"nometrics", false, false}, {"metrics+systemclock", true, true}} {
		b.Run(m.name, func(b *testing.B) {
			d, cfg := benchDispatcher(b, m.metrics, m.systemClock)
			r := &dispatch.Request{Schema: schema(b, cfg, "workload-low"),
				FlowHash: shufflesharding.Hash("workload-low", "tenant-42"), Width: 1}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if d.Handle(ctx, r, noop) != dispatch.Executed {
					b.Fatal("rejected")
				}
			}
		})
	}
}

// BenchmarkHandleContended runs Handle from many goroutines (GOMAXPROCS x parallelism) with
// SCL 600 and 1000 flows.
func BenchmarkHandleContended(b *testing.B) {
	d, cfg := benchDispatcher(b, true, false)
	s := schema(b, cfg, "workload-low")
	ctx := context.Background()
	var next atomic.Uint64
	b.SetParallelism(128) // 256 goroutines on 2 CPUs
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := &dispatch.Request{Schema: s, FlowHash: shufflesharding.Hash("workload-low", string(rune(next.Add(1)%1000))), Width: 1}
		for pb.Next() {
			if d.Handle(ctx, r, noop) != dispatch.Executed {
				b.Error("rejected")
				return
			}
		}
	})
}

// BenchmarkSemaphore is the floor: the old max-in-flight filter, a buffered channel of 600.
func BenchmarkSemaphore(b *testing.B) {
	sem := make(chan struct{}, 600)
	b.ReportAllocs()
	for b.Loop() {
		sem <- struct{}{}
		noop()
		<-sem
	}
}

// BenchmarkSemaphoreContended is the floor under contention, as BenchmarkHandleContended.
func BenchmarkSemaphoreContended(b *testing.B) {
	sem := make(chan struct{}, 600)
	b.SetParallelism(128)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			sem <- struct{}{}
			noop()
			<-sem
		}
	})
}

// BenchmarkHandleQueued is the waiting path: 256 goroutines on SCL 4, so most requests queue,
// are dispatched by another request's finish and wake up. The idle levels lend all their
// seats (each has ACV 1: without lending workload-low would run one request at a time).
func BenchmarkHandleQueued(b *testing.B) {
	cfg := benchConfig(b, 100)
	d := dispatch.New(cfg, dispatch.Options{ServerConcurrencyLimit: 4, Metrics: metrics.NewMetrics(prometheus.NewRegistry())})
	s := schema(b, cfg, "workload-low")
	ctx := context.Background()
	var next atomic.Uint64
	b.SetParallelism(128)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := &dispatch.Request{Schema: s, FlowHash: shufflesharding.Hash("workload-low", string(rune(next.Add(1)))), Width: 1}
		for pb.Next() {
			d.Handle(ctx, r, noop)
		}
	})
}
