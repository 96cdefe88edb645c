package dispatch_test

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/shufflesharding"
)

// TestFairnessHeavyAndLightFlows runs one heavy flow, which keeps 120 requests outstanding
// (more than its queues hold), and ten light flows, each offering 0.8 of a seat (a fair share
// is 10/11), through the dispatcher on a fake clock. Every flow's share of the executing width
// is within 0.03 of the max-min fair allocation, and no light request is rejected.
func TestFairnessHeavyAndLightFlows(t *testing.T) {
	flows, measured, fair := runFairSim(t, lvl{name: "l", level: 100, shares: 10, queues: 64, hand: 6, limit: 20}, 125*time.Second)
	for i, f := range flows {
		if e := math.Abs(measured[i] - fair[i]); e > 0.03 {
			t.Errorf("flow %s: measured share %.4f, max-min fair share %.4f, error %.4f > 0.03",
				f.name, measured[i], fair[i], e)
		}
		if f.rejected > 0 && f.backlog == 0 {
			t.Errorf("light flow %s: %d requests rejected", f.name, f.rejected)
		}
	}
	if fair[0] < 0.1 {
		t.Fatalf("scenario drifted: heavy flow's fair share %.3f", fair[0])
	}
	t.Logf("measured %.3f\nfair     %.3f", measured, fair)
}

// TestFairnessControlOneQueue runs the same traffic through one FIFO queue per width: the
// heavy flow keeps it full, light requests are rejected and the shares are far from fair. It
// shows that the test above can fail.
func TestFairnessControlOneQueue(t *testing.T) {
	_, measured, fair := runFairSim(t, lvl{name: "l", level: 100, shares: 10, queues: 1, limit: 20}, 25*time.Second)
	worst := 0.0
	for i := range measured {
		worst = max(worst, math.Abs(measured[i]-fair[i]))
	}
	if worst < 0.1 {
		t.Fatalf("one queue: worst fairness error %.4f, want far above 0.03 (measured %.3f, fair %.3f)", worst, measured, fair)
	}
}

// runFairSim simulates the heavy and light flows at one level with SCL 10 until the given time
// and returns the flows, their measured shares of the executing width from 5 s on and their
// max-min fair shares.
func runFairSim(t *testing.T, level lvl, until time.Duration) (flows []*simFlow, measured, fair []float64) {
	cfg := buildConfig(t, level)
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 10})
	s := &fairSim{h: h, schema: schema(t, cfg, "l"), rng: rand.New(rand.NewPCG(5, 6)),
		meta: map[*job]*simJob{}, from: 5 * time.Second, to: until}
	s.flows = append(s.flows, &simFlow{name: "heavy", backlog: 120, meanService: 200 * time.Millisecond})
	for i := 0; i < 10; i++ {
		s.flows = append(s.flows, &simFlow{name: string(rune('a' + i)), meanInterval: 250 * time.Millisecond,
			meanService: 200 * time.Millisecond})
	}
	s.run()
	s.drain()
	window := float64(s.to - s.from)
	demands := make([]float64, len(s.flows))
	for i, f := range s.flows {
		measured = append(measured, float64(f.seatTime)/window/10)
		demands[i] = -1
		if f.backlog == 0 {
			demands[i] = float64(f.offered) / window / 10
		}
	}
	return s.flows, measured, maxMinFair(1, demands)
}

type simFlow struct {
	name         string
	backlog      int           // > 0: closed loop keeping that many requests outstanding
	meanInterval time.Duration // open loop: mean time between arrivals
	meanService  time.Duration

	seatTime, offered time.Duration
	rejected          int
}

type simJob struct {
	flow    *simFlow
	service time.Duration
}

type fairSim struct {
	h      *harness
	schema *effective.Schema
	rng    *rand.Rand
	flows  []*simFlow
	meta   map[*job]*simJob
	events simEvents
	seq    int
	from   time.Duration
	to     time.Duration
}

func (s *fairSim) now() time.Duration { return s.h.clock.Now().Sub(epoch) }

func (s *fairSim) at(t time.Duration, fn func()) {
	s.seq++
	heap.Push(&s.events, &simEvent{at: t, seq: s.seq, fn: fn})
}

func (s *fairSim) run() {
	for _, f := range s.flows {
		f := f
		if f.backlog > 0 {
			for i := 0; i < f.backlog; i++ {
				s.submit(f)
			}
		} else {
			s.at(s.exp(f.meanInterval), func() { s.openArrival(f) })
		}
	}
	s.collect()
	for s.events.Len() > 0 {
		e := heap.Pop(&s.events).(*simEvent)
		if e.at > s.to {
			break
		}
		s.h.clock.SetTime(epoch.Add(e.at))
		s.h.settle()
		e.fn()
		s.collect()
	}
}

// drain ends the simulation: cancels every waiting request, lets every executing one finish.
func (s *fairSim) drain() {
	jobs := make([]*job, 0, len(s.meta))
	for j := range s.meta {
		jobs = append(jobs, j)
	}
	s.h.shutdown(jobs)
}

func (s *fairSim) openArrival(f *simFlow) {
	s.submit(f)
	s.at(s.now()+s.exp(f.meanInterval), func() { s.openArrival(f) })
}

func (s *fairSim) submit(f *simFlow) {
	sj := &simJob{flow: f, service: s.exp(f.meanService) + time.Millisecond}
	if now := s.now(); now >= s.from && now < s.to {
		f.offered += sj.service
	}
	j := s.h.submit(s.schema, shufflesharding.Hash("l", f.name), 1, f.name)
	s.meta[j] = sj
}

// collect schedules the finish of every request that started and replaces the heavy flow's
// requests that ended.
func (s *fairSim) collect() {
	for {
		started, finished := s.h.takeStarted(), s.h.takeFinished()
		if len(started) == 0 && len(finished) == 0 {
			return
		}
		for _, j := range started {
			j := j
			s.at(s.now()+s.meta[j].service, func() { s.finish(j) })
		}
		for _, j := range finished {
			sj := s.meta[j]
			delete(s.meta, j)
			if j.outcome != dispatch.Executed {
				sj.flow.rejected++
			}
			if f := sj.flow; f.backlog > 0 && j.outcome == dispatch.Executed {
				s.submit(f)
			} else if f.backlog > 0 { // a rejected client retries after a pause
				s.at(s.now()+50*time.Millisecond, func() { s.submit(f) })
			}
		}
	}
}

func (s *fairSim) finish(j *job) {
	start, end := j.startAt.Sub(epoch), s.now()
	if overlap := min(end, s.to) - max(start, s.from); overlap > 0 {
		s.meta[j].flow.seatTime += overlap
	}
	j.finish()
}

func (s *fairSim) exp(mean time.Duration) time.Duration {
	return time.Duration(s.rng.ExpFloat64() * float64(mean))
}

type simEvent struct {
	at  time.Duration
	seq int
	fn  func()
}

type simEvents []*simEvent

func (h simEvents) Len() int { return len(h) }
func (h simEvents) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h simEvents) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *simEvents) Push(x any)   { *h = append(*h, x.(*simEvent)) }
func (h *simEvents) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// maxMinFair returns the max-min fair allocation of capacity among demands (a demand < 0 is
// unbounded), by water-filling.
func maxMinFair(capacity float64, demands []float64) []float64 {
	bound := func(d float64) float64 {
		if d < 0 {
			return math.Inf(1)
		}
		return d
	}
	idx := make([]int, len(demands))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return bound(demands[idx[a]]) < bound(demands[idx[b]]) })
	alloc := make([]float64, len(demands))
	left := capacity
	for k, i := range idx {
		alloc[i] = min(bound(demands[i]), left/float64(len(idx)-k))
		left -= alloc[i]
	}
	return alloc
}
