package fairqueue

// Request is a request's place in a QueueSet, from Enqueue or Start until Finish (or Remove).
// The owner allocates it (typically inside its own pooled per-request state) and passes the
// same pointer to every call; the set links it into its queue without allocating.
type Request struct {
	// Owner is for the owner's use (for example, its per-request state); the set never reads it.
	Owner any

	queue      *queue
	prev, next *Request
	token      uint64 // non-zero: admitted unbooked (see deferred.go)
}

// Width returns the width of the queue the request is in, or 0 when it is in none.
func (r *Request) Width() int {
	if r.queue == nil {
		return 0
	}
	return r.queue.width
}

// queue is one FIFO queue of requests of one width.
type queue struct {
	index int // within its width
	width int

	head, tail *Request
	waiting    int // requests linked in the queue
	executing  int // requests dispatched from the queue and not finished

	// start is the queue's virtual start time S, in virtual nanoseconds.
	start float64
	// heapPos is the queue's position in the set's index, -1 when it has nothing waiting.
	heapPos int
}

// idle reports whether the queue holds neither waiting nor executing requests.
func (q *queue) idle() bool { return q.waiting == 0 && q.executing == 0 }

// length is the queue's length for the choice of a queue: its waiting and executing requests.
func (q *queue) length() int { return q.waiting + q.executing }

func (q *queue) push(r *Request) {
	r.queue, r.prev, r.next = q, q.tail, nil
	if q.tail == nil {
		q.head = r
	} else {
		q.tail.next = r
	}
	q.tail = r
	q.waiting++
}

// unlink removes r from the queue; r keeps its queue pointer (it may be executing next).
func (q *queue) unlink(r *Request) {
	if r.prev == nil {
		q.head = r.next
	} else {
		r.prev.next = r.next
	}
	if r.next == nil {
		q.tail = r.prev
	} else {
		r.next.prev = r.prev
	}
	r.prev, r.next = nil, nil
	q.waiting--
}
