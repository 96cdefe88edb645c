package fairqueue

import (
	"container/heap"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// sim is a single-threaded discrete-event simulation of one priority level with capacity
// seats, dispatching from a QueueSet as the dispatcher does: whenever seats are free, the head
// chosen by fair queuing is dispatched if its width fits.
type sim struct {
	set      *QueueSet
	capacity int
	inUse    int
	now      time.Duration
	events   eventHeap
	seq      int
	flows    []*simFlow
	// measurement window
	from, to time.Duration
	// choices counts the requests that joined a queue; wrongChoices those whose queue was not
	// referenceChoice's.
	choices, wrongChoices int
}

// checkChoices fails unless every request joined the queue referenceChoice named.
func (s *sim) checkChoices(t *testing.T) {
	t.Helper()
	if s.choices == 0 || s.wrongChoices != 0 {
		t.Fatalf("%d of %d requests joined another queue than the first of the fewest waiting plus executing in their hand",
			s.wrongChoices, s.choices)
	}
}

type simFlow struct {
	hash    uint64
	width   int
	service func(*rand.Rand) time.Duration
	// backlog > 0: closed loop keeping that many requests outstanding; otherwise open loop
	// with exponential inter-arrival times of mean interval.
	backlog  int
	interval time.Duration

	seatTime time.Duration // width x executing time inside the window
	offered  time.Duration // width x service time of requests arriving inside the window
	rejected int
	done     int
	waits    []time.Duration
}

type simRequest struct {
	Request
	arrived time.Duration
	flow    *simFlow
	service time.Duration
	started time.Duration
}

type event struct {
	at  time.Duration
	seq int
	fn  func()
}

type eventHeap []*event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(*event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func (s *sim) at(t time.Duration, fn func()) {
	s.seq++
	heap.Push(&s.events, &event{at: t, seq: s.seq, fn: fn})
}

func (s *sim) run(rng *rand.Rand, until time.Duration) {
	for _, f := range s.flows {
		f := f
		if f.backlog > 0 {
			for i := 0; i < f.backlog; i++ {
				s.arrive(rng, f)
			}
		} else {
			s.at(expDuration(rng, f.interval), func() { s.openArrival(rng, f) })
		}
	}
	for s.events.Len() > 0 {
		e := heap.Pop(&s.events).(*event)
		if e.at > until {
			break
		}
		s.now = e.at
		e.fn()
	}
}

func (s *sim) openArrival(rng *rand.Rand, f *simFlow) {
	s.arrive(rng, f)
	s.at(s.now+expDuration(rng, f.interval), func() { s.openArrival(rng, f) })
}

func (s *sim) arrive(rng *rand.Rand, f *simFlow) {
	r := &simRequest{flow: f, service: f.service(rng), arrived: s.now}
	if s.now >= s.from && s.now < s.to {
		f.offered += time.Duration(f.width) * r.service
	}
	want := referenceChoice(s.set, f.hash, f.width)
	if !s.set.Enqueue(s.now, &r.Request, f.hash, f.width) {
		f.rejected++
		if f.backlog > 0 {
			// A closed-loop client retries after a pause.
			s.at(s.now+50*time.Millisecond, func() { s.arrive(rng, f) })
		}
		return
	}
	r.Owner = r
	s.choices++
	if r.queue.index != want {
		s.wrongChoices++
	}
	s.dispatch(rng)
}

func (s *sim) dispatch(rng *rand.Rand) {
	for {
		head := s.set.Head()
		if head == nil || s.inUse+head.Width() > s.capacity {
			return
		}
		r := s.set.Dispatch(s.now).Owner.(*simRequest)
		s.inUse += r.flow.width
		r.started = s.now
		r.flow.waits = append(r.flow.waits, s.now-r.arrived)
		s.at(s.now+r.service, func() { s.finish(rng, r) })
	}
}

func (s *sim) finish(rng *rand.Rand, r *simRequest) {
	s.set.Finish(s.now, &r.Request, r.service)
	s.inUse -= r.flow.width
	f := r.flow
	f.done++
	overlap := min(s.now, s.to) - max(r.started, s.from)
	if overlap > 0 {
		f.seatTime += time.Duration(f.width) * overlap
	}
	if f.backlog > 0 {
		s.arrive(rng, f)
	}
	s.dispatch(rng)
}

func expDuration(rng *rand.Rand, mean time.Duration) time.Duration {
	return time.Duration(rng.ExpFloat64() * float64(mean))
}

// maxMinFair returns the max-min fair allocation of capacity among demands (a demand < 0
// means unbounded), by water-filling.
func maxMinFair(capacity float64, demands []float64) []float64 {
	alloc := make([]float64, len(demands))
	idx := make([]int, len(demands))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return bounded(demands[idx[a]]) < bounded(demands[idx[b]]) })
	left := capacity
	for k, i := range idx {
		share := left / float64(len(idx)-k)
		alloc[i] = min(bounded(demands[i]), share)
		left -= alloc[i]
	}
	return alloc
}

func bounded(d float64) float64 {
	if d < 0 {
		return 1e300
	}
	return d
}
