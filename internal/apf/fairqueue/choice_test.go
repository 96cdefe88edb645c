package fairqueue

import (
	"fmt"
	"testing"

	"github.com/apf-operator/apf-operator/internal/apf/shufflesharding"
)

// referenceChoice is the proposal's queue choice computed from the outside: deal the flow's
// hand and take the first queue of the fewest waiting plus executing requests, reading the
// lengths from AppendState. It books a pending deferred request, so tests call it on sets
// that do not defer, or where booking first changes nothing.
func referenceChoice(s *QueueSet, hash uint64, width int) int {
	n := s.cfg.QueuesPerWidth
	hand := []int{0}
	if n > 1 {
		dealer, err := shufflesharding.NewDealer(n, s.cfg.HandSize)
		if err != nil {
			panic(err) // New accepted the same configuration
		}
		hand = dealer.DealIntoHand(hash, nil)
	}
	lengths := make([]int, n)
	for _, q := range s.AppendState(nil) {
		if q.Width == width {
			lengths[q.Index] = q.Length + q.Executing
		}
	}
	best := hand[0]
	for _, i := range hand[1:] {
		if lengths[i] < lengths[best] {
			best = i
		}
	}
	return best
}

// TestShortestQueueCountsExecuting: executing requests make a queue longer, so with nothing
// waiting anywhere a request avoids the queues of its hand that still execute requests, and
// an idle first card is taken at once.
func TestShortestQueueCountsExecuting(t *testing.T) {
	s := newSet(t, Config{QueuesPerWidth: 16, HandSize: 4, QueueLengthLimit: 100})
	dealer, _ := shufflesharding.NewDealer(16, 4)
	hash := shufflesharding.Hash("fs", "bob")
	hand := dealer.DealIntoHand(hash, nil)

	var rs [5]Request
	s.Start(0, &rs[0], hash, 1) // idle set: deferred, booked into the first card below
	s.Start(0, &rs[1], hash, 1)
	if got := s.deferred.q.index; got != hand[0] {
		t.Fatalf("the first request executes in queue %d, want the first card %d", got, hand[0])
	}
	if got := rs[1].queue.index; got != hand[1] {
		t.Fatalf("the second request executes in queue %d, want %d: the first card executes one", got, hand[1])
	}
	if !s.Enqueue(0, &rs[2], hash, 1) || rs[2].queue.index != hand[2] {
		t.Fatalf("a waiting request joined queue %d, want %d: nothing waits, but two cards execute", rs[2].queue.index, hand[2])
	}
	if !s.Enqueue(0, &rs[3], hash, 1) || rs[3].queue.index != hand[3] {
		t.Fatalf("joined queue %d, want %d, the only empty queue of the hand", rs[3].queue.index, hand[3])
	}
	// Every queue of the hand holds one request now, waiting or executing: the first card.
	if !s.Enqueue(0, &rs[4], hash, 1) || rs[4].queue.index != hand[0] {
		t.Fatalf("joined queue %d, want the first card %d among equals", rs[4].queue.index, hand[0])
	}
	if got := referenceChoice(s, hash, 1); got != hand[1] {
		t.Fatalf("reference choice %d, want %d once hand[0] has two", got, hand[1])
	}
}

// TestCachedHandsAreDealtHands: the remembered hands equal dealt ones, also for flows that
// share a slot of the table and evict each other, and for hands too large to remember.
func TestCachedHandsAreDealtHands(t *testing.T) {
	for _, hand := range []int{3, maxCachedHand, maxCachedHand + 1} {
		s := newSet(t, Config{QueuesPerWidth: 64, HandSize: hand, QueueLengthLimit: 1})
		dealer, _ := shufflesharding.NewDealer(64, hand)
		if (s.hands != nil) != (hand <= maxCachedHand) {
			t.Fatalf("hand %d: table %v", hand, s.hands != nil)
		}
		slot := func(h uint64) uint64 { return (h * 0x9E3779B97F4A7C15) >> 56 }
		a := uint64(12345)
		b := a + 1
		for slot(b) != slot(a) {
			b++
		}
		for i := range 6 {
			h := []uint64{a, b, a + 7}[i%3]
			want := dealer.DealIntoHand(h, nil)
			if s.hands != nil {
				var got []int
				for _, c := range s.cachedHandOf(h) {
					got = append(got, int(c))
				}
				if len(got) != len(want) || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("hand %d, hash %d: remembered %v, dealt %v", hand, h, got, want)
				}
			}
			qs := s.queues[:64]
			if c := s.shortestOfHand(qs, h); c != want[0] {
				t.Fatalf("hand %d, hash %d: chose %d among empty queues, want the first card %d", hand, h, c, want[0])
			}
		}
	}
}
