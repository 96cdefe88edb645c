package fairqueue

import "time"

// A request that Start admits while its QueueSet is idle (nothing waits or executes in any
// queue) runs unbooked: Start only remembers its flow hash, width and start time, and Finish
// forgets it again. Until it finishes, every other operation on the set first
// books it: chooses its queue and charges it exactly as Start would have at its start time.
// So a request that had the set to itself from start to finish costs no queue bookkeeping,
// and any other request sees the state Start would have left. The only difference is the
// origin of virtual time after such a request (R restarts from 0 when the set next becomes
// busy, instead of from the request's service time); the set is idle then, so every start
// time compared afterwards is measured from the same origin and no decision changes.

// deferredState is the state of a set's deferred request.
type deferredState uint8

const (
	deferredNone    deferredState = iota
	deferredPending               // admitted, not booked
	deferredBooked                // booked into queue q by a later operation
)

// deferredStart is the set's one deferred request.
type deferredStart struct {
	token uint64 // the request's Request.token; never 0
	hash  uint64
	at    time.Duration
	q     *queue // when booked
	width uint8
	state deferredState
}

// startDeferred admits r as Start does if the set is idle and reports whether it did.
func (s *QueueSet) startDeferred(now time.Duration, r *Request, flowHash uint64, width int) bool {
	if s.noDefer || s.activeWidth != 0 || s.deferred.state != deferredNone {
		return false
	}
	s.nextToken++
	// Field by field: a composite literal is built in a temporary and copied with wide loads
	// that cannot be forwarded from the temporary's narrow stores, which stalled every start.
	d := &s.deferred
	d.token, d.hash, d.at, d.q = s.nextToken, flowHash, now, nil
	d.width, d.state = uint8(min(max(width, 1), MaxWidth)), deferredPending
	r.queue, r.token = nil, s.nextToken
	return true
}

// finishDeferred is Finish for the request startDeferred admitted with token.
func (s *QueueSet) finishDeferred(token uint64, now, service time.Duration) {
	d := &s.deferred
	if d.token != token || d.state == deferredNone {
		return // not this set's request: a bug of the owner, ignored rather than corrupting the set
	}
	if d.state == deferredBooked {
		r := Request{queue: d.q}
		s.finish(now, &r, service)
	}
	*d = deferredStart{}
}

// book books a pending deferred request, as Start at its start time would have. Every
// operation calls it first.
func (s *QueueSet) book() {
	d := &s.deferred
	if d.state != deferredPending {
		return
	}
	q := s.choose(d.hash, int(d.width))
	s.advance(d.at)
	s.activate(q)
	s.begin(q)
	d.state, d.q = deferredBooked, q
}
