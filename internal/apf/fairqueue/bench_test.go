package fairqueue

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkStartFinish is the uncontended path: admit and dispatch at once, then finish.
func BenchmarkStartFinish(b *testing.B) {
	s, _ := New(Config{QueuesPerWidth: 128, HandSize: 6, QueueLengthLimit: 100})
	var r Request
	now := time.Duration(0)
	b.ReportAllocs()
	for b.Loop() {
		now += time.Microsecond
		s.Start(now, &r, uint64(now), 1)
		s.Finish(now+time.Microsecond, &r, time.Microsecond)
	}
}

// BenchmarkEnqueueDispatch is the queued path with a backlog in 64 queues: deal a hand, join
// the shortest queue, dispatch the head of the index, finish.
func BenchmarkEnqueueDispatch(b *testing.B) {
	s, _ := New(Config{QueuesPerWidth: 128, HandSize: 6, QueueLengthLimit: 1 << 20})
	backlog := make([]Request, 256)
	for i := range backlog {
		s.Enqueue(0, &backlog[i], uint64(i*7919), 1)
	}
	now := time.Duration(0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		now += time.Microsecond
		r := s.Dispatch(now)
		s.Finish(now, r, time.Millisecond)
		s.Enqueue(now, r, uint64(i)*0x9e3779b97f4a7c15, 1)
	}
}

// BenchmarkStartFinishBusy is the uncontended path on a busy level: 64 requests execute,
// spread over the 128 queues by their first cards, so an arrival whose first card executes a
// request chooses among its hand. Arrivals come from 200 flows in turn, or each from a new
// flow.
func BenchmarkStartFinishBusy(b *testing.B) {
	for _, flows := range []uint64{200, 0} {
		name := "flows=new"
		if flows > 0 {
			name = fmt.Sprintf("flows=%d", flows)
		}
		b.Run(name, func(b *testing.B) {
			s, _ := New(Config{QueuesPerWidth: 128, HandSize: 6, QueueLengthLimit: 100})
			busy := make([]Request, 64)
			for i := range busy {
				s.Start(0, &busy[i], uint64(i)*0x9e3779b97f4a7c15, 1)
			}
			var r Request
			now := time.Duration(0)
			b.ReportAllocs()
			for i := uint64(0); b.Loop(); i++ {
				now += time.Microsecond
				flow := i
				if flows > 0 {
					flow = i % flows
				}
				s.Start(now, &r, flow*0xbf58476d1ce4e5b9, 1)
				s.Finish(now+time.Microsecond, &r, time.Microsecond)
			}
		})
	}
}
