package benchmark

import "context"

// Semaphore is the floor: a counting semaphore of a fixed number of seats with no
// classification and no fairness. While a seat is free it costs what the old max-in-flight
// filter cost (a non-blocking channel send to take the seat, a receive to give it back); when
// none is free it waits, first come first served, instead of rejecting, so that it can be
// compared with the queuing implementations under overload.
type Semaphore struct {
	seats chan struct{}
}

// NewSemaphore returns a semaphore of the given number of seats.
func NewSemaphore(seats int) *Semaphore {
	return &Semaphore{seats: make(chan struct{}, seats)}
}

// Prepare implements Impl. A request takes Width(verb) seats.
func (s *Semaphore) Prepare(r Request) Prepared {
	return &semaphoreRequest{seats: s.seats, width: Width(r.Verb)}
}

// Close implements Impl.
func (s *Semaphore) Close() {}

type semaphoreRequest struct {
	seats chan struct{}
	width int
}

// Handle implements Prepared.
func (r *semaphoreRequest) Handle(ctx context.Context, exec func()) {
	for taken := 0; taken < r.width; taken++ {
		select {
		case r.seats <- struct{}{}:
			continue
		default:
		}
		select {
		case r.seats <- struct{}{}:
		case <-ctx.Done():
			r.release(taken)
			return
		}
	}
	exec() // a panic leaks the seats; the benchmarks' exec functions do not panic
	r.release(r.width)
}

func (r *semaphoreRequest) release(n int) {
	for range n {
		<-r.seats
	}
}
