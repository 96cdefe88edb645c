package fairqueue

import "time"

// QueueState describes one non-empty queue, for debugging.
type QueueState struct {
	// Index is the queue's index among the queues of its width.
	Index int `json:"index"`
	// Width is the width of the queue's requests: 1 (read-only) or 2 (mutating).
	Width int `json:"width"`
	// Length is the number of waiting requests.
	Length int `json:"length"`
	// Executing is the number of requests dispatched from the queue and not finished.
	Executing int `json:"executing"`
	// VirtualStart is the queue's virtual start time S, in virtual seconds.
	VirtualStart float64 `json:"virtualStartSeconds"`
}

// AppendState appends the state of every non-empty queue to states and returns it.
func (s *QueueSet) AppendState(states []QueueState) []QueueState {
	s.book()
	for i := range s.queues {
		q := &s.queues[i]
		if q.idle() {
			continue
		}
		states = append(states, QueueState{Index: q.index, Width: q.width, Length: q.waiting,
			Executing: q.executing, VirtualStart: q.start / float64(time.Second)})
	}
	return states
}

// VirtualTime returns R as of the last event, in virtual seconds.
func (s *QueueSet) VirtualTime() float64 {
	s.book()
	return s.virtualNow / float64(time.Second)
}
