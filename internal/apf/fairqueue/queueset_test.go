package fairqueue

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/shufflesharding"
)

const sec = time.Second

func newSet(t *testing.T, cfg Config) *QueueSet {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{QueuesPerWidth: 0, QueueLengthLimit: 1},
		{QueuesPerWidth: 1, QueueLengthLimit: 0},
		{QueuesPerWidth: 8, HandSize: 0, QueueLengthLimit: 1},
		{QueuesPerWidth: 8, HandSize: 9, QueueLengthLimit: 1},
		{QueuesPerWidth: 1, QueueLengthLimit: 1, ServiceTimeGuess: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) = nil error; want one", cfg)
		}
	}
	s := newSet(t, Config{QueuesPerWidth: 1, QueueLengthLimit: 1})
	if s.Config().ServiceTimeGuess != DefaultServiceTimeGuess {
		t.Errorf("default G = %v, want %v", s.Config().ServiceTimeGuess, DefaultServiceTimeGuess)
	}
}

// TestJoinsShortestQueueOfHand: a request joins the shortest queue of its hand, the first dealt
// among equals; with nothing waiting or executing that is the first card, hash mod N.
func TestJoinsShortestQueueOfHand(t *testing.T) {
	s := newSet(t, Config{QueuesPerWidth: 16, HandSize: 4, QueueLengthLimit: 100})
	dealer, _ := shufflesharding.NewDealer(16, 4)
	hash := shufflesharding.Hash("fs", "alice")
	hand := dealer.DealIntoHand(hash, nil)
	if int(hash%16) != hand[0] {
		t.Fatalf("first card %d != hash mod 16 = %d", hand[0], hash%16)
	}
	var rs [8]Request
	s.Enqueue(0, &rs[0], hash, 1)
	if got := rs[0].queue.index; got != hand[0] {
		t.Fatalf("first request joined queue %d, want the first card %d", got, hand[0])
	}
	// Each later request goes to an empty queue of the hand, in dealing order, then wraps.
	for i := 1; i < 6; i++ {
		s.Enqueue(0, &rs[i], hash, 1)
		if want := hand[i%4]; rs[i].queue.index != want {
			t.Fatalf("request %d joined queue %d, want %d (hand %v)", i, rs[i].queue.index, want, hand)
		}
	}
	// A width-2 request uses the width-2 queues, whose hand is empty.
	s.Enqueue(0, &rs[6], hash, 2)
	if rs[6].queue.width != 2 || rs[6].queue.index != hand[0] || rs[6].Width() != 2 {
		t.Fatalf("width-2 request in queue %d of width %d", rs[6].queue.index, rs[6].queue.width)
	}
}

// TestQueueLengthLimitRejectsArriving: the arriving request is rejected when its queue holds
// the limit, and nothing changes; the waiting requests keep their places.
func TestQueueLengthLimitRejectsArriving(t *testing.T) {
	s := newSet(t, Config{QueuesPerWidth: 1, QueueLengthLimit: 2})
	var a, b, c Request
	if !s.Enqueue(0, &a, 1, 1) || !s.Enqueue(0, &b, 1, 1) {
		t.Fatal("requests below the limit were rejected")
	}
	if s.Enqueue(0, &c, 1, 1) {
		t.Fatal("the third request was accepted at queue length limit 2")
	}
	if s.Waiting() != 2 || s.Head() != &a || c.queue != nil {
		t.Fatalf("after rejection: waiting %d, head %p (want %p)", s.Waiting(), s.Head(), &a)
	}
	s.SetQueueLengthLimit(3)
	if !s.Enqueue(0, &c, 1, 1) {
		t.Fatal("rejected below the raised limit")
	}
}

// TestVirtualTime follows the proposal's bookkeeping step by step with G = 10 s.
func TestVirtualTime(t *testing.T) {
	s := newSet(t, Config{QueuesPerWidth: 4, HandSize: 1, QueueLengthLimit: 10, ServiceTimeGuess: 10 * sec})
	var a1, a2, b1 Request
	s.Enqueue(0, &a1, 0, 1) // queue 0 becomes active: S0 = R = 0
	s.Enqueue(0, &a2, 0, 1)
	s.Enqueue(0, &b1, 1, 2) // width-2 queue 1: S = 0; NEQ = 1 + 2 = 3
	if s.activeWidth != 3 {
		t.Fatalf("NEQ = %d, want 3", s.activeWidth)
	}
	// Nothing executes: R stays.
	if s.Dispatch(2*sec) != &a1 { // tie at S = 0 broken by width: queue 0 of width 1
		t.Fatal("head of the width-1 queue not dispatched first")
	}
	assertNear(t, "R after idle wait", s.virtualNow, 0)
	assertNear(t, "S0 after dispatch", a1.queue.start, float64(10*sec))
	// One width-1 request executes, NEQ = 3: R advances at 1/3.
	if s.Head() != &b1 {
		t.Fatal("queue of width 2, S = 0, should be next")
	}
	s.Dispatch(5 * sec)
	assertNear(t, "R", s.virtualNow, float64(sec))
	// Now width 3 executes, NEQ = 3: rate 1.
	s.Finish(8*sec, &a1, 6*sec) // S0 -= G - 6 s
	assertNear(t, "R", s.virtualNow, float64(4*sec))
	assertNear(t, "S0 after finish", a2.queue.start, float64(6*sec))
	if s.Head() != &a2 {
		t.Fatal("a2 should head the index")
	}
	// Cancel a2: queue 0 becomes idle, NEQ = 2 (the executing width-2 request).
	s.Remove(8*sec, &a2)
	if s.activeWidth != 2 || s.Waiting() != 0 || s.Head() != nil {
		t.Fatalf("after remove: NEQ %d waiting %d head %v", s.activeWidth, s.Waiting(), s.Head())
	}
	s.Finish(9*sec, &b1, sec) // rate 2/2 for 1 s
	assertNear(t, "R", s.virtualNow, float64(5*sec))
	if !s.Idle() {
		t.Fatal("set not idle")
	}
	// A queue activated after the set was idle starts at R = 0 again.
	var c Request
	s.Enqueue(20*sec, &c, 2, 1)
	assertNear(t, "S of a new queue after idle", c.queue.start, 0)
}

// TestDispatchOrderFavorsQueuesWithLessInFlight: a queue charged G for a request in flight is
// served after a newly active queue.
func TestDispatchOrderFavorsQueuesWithLessInFlight(t *testing.T) {
	s := newSet(t, Config{QueuesPerWidth: 8, HandSize: 1, QueueLengthLimit: 10})
	var a1, a2, a3, b1 Request
	s.Enqueue(0, &a1, 0, 1)
	s.Enqueue(0, &a2, 0, 1)
	s.Enqueue(0, &a3, 0, 1)
	s.Dispatch(0) // a1 executes: queue 0 is G ahead
	s.Enqueue(sec, &b1, 5, 1)
	if got := s.Dispatch(sec); got != &b1 {
		t.Fatal("the newly active queue was not dispatched before the queue with a request in flight")
	}
	if got := s.Dispatch(sec); got != &a2 {
		t.Fatal("a2 not dispatched next")
	}
}

func TestRemoveFromMiddleKeepsOrder(t *testing.T) {
	s := newSet(t, Config{QueuesPerWidth: 1, QueueLengthLimit: 10})
	var r [4]Request
	for i := range r {
		s.Enqueue(0, &r[i], 0, 1)
	}
	s.Remove(0, &r[1])
	s.Remove(0, &r[3])
	for _, want := range []*Request{&r[0], &r[2]} {
		if got := s.Dispatch(0); got != want {
			t.Fatalf("dispatched %p, want %p", got, want)
		}
	}
	if s.Dispatch(0) != nil || s.Waiting() != 0 {
		t.Fatal("requests left after draining")
	}
}

// TestIndexMatchesScan drives random operations and checks after each that the index names
// the queue a scan of all queues would pick and that the counters agree with the queues.
func TestIndexMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := newSet(t, Config{QueuesPerWidth: 8, HandSize: 3, QueueLengthLimit: 4, ServiceTimeGuess: sec})
	var waiting, executing []*Request
	now := time.Duration(0)
	for step := 0; step < 20000; step++ {
		now += time.Duration(rng.IntN(int(100 * time.Millisecond)))
		switch op := rng.IntN(10); {
		case op < 4:
			r := &Request{}
			if s.Enqueue(now, r, rng.Uint64()%20, 1+rng.IntN(2)) {
				waiting = append(waiting, r)
			}
		case op < 6 && len(waiting) > 0:
			r := s.Dispatch(now)
			waiting = removeReq(t, waiting, r)
			executing = append(executing, r)
		case op < 7 && len(waiting) > 0:
			i := rng.IntN(len(waiting))
			s.Remove(now, waiting[i])
			waiting = append(waiting[:i], waiting[i+1:]...)
		case op < 10 && len(executing) > 0:
			i := rng.IntN(len(executing))
			s.Finish(now, executing[i], time.Duration(rng.IntN(int(3*sec))))
			executing = append(executing[:i], executing[i+1:]...)
		}
		checkInvariants(t, s, len(waiting))
	}
}

func checkInvariants(t *testing.T, s *QueueSet, waiting int) {
	t.Helper()
	var best *queue
	nWaiting, active, execWidth := 0, 0, 0
	for i := range s.queues {
		q := &s.queues[i]
		nWaiting += q.waiting
		execWidth += q.executing * q.width
		if !q.idle() {
			active += q.width
		}
		if q.waiting > 0 && (best == nil || less(q, best)) {
			best = q
		}
		if (q.waiting > 0) != (q.heapPos >= 0) {
			t.Fatalf("queue %d/%d: waiting %d but heap position %d", q.width, q.index, q.waiting, q.heapPos)
		}
	}
	if nWaiting != waiting || s.Waiting() != waiting || active != s.activeWidth || execWidth != s.executingWidth {
		t.Fatalf("counters: waiting %d/%d/%d NEQ %d/%d executing %d/%d", nWaiting, s.Waiting(), waiting,
			active, s.activeWidth, execWidth, s.executingWidth)
	}
	if best == nil && s.Head() != nil || best != nil && s.Head() != best.head {
		t.Fatal("index head differs from the scan's choice")
	}
}

func removeReq(t *testing.T, rs []*Request, r *Request) []*Request {
	for i := range rs {
		if rs[i] == r {
			return append(rs[:i], rs[i+1:]...)
		}
	}
	t.Fatalf("dispatched a request that was not waiting")
	return nil
}

func assertNear(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-3 {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}
