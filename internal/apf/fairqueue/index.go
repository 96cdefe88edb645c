package fairqueue

// queueIndex is a binary min-heap of the queues with waiting requests, ordered by virtual
// start time, then by width and queue index (so equal times dispatch deterministically). The
// head of the first queue has the least virtual finish time S + G.
type queueIndex struct {
	heap []*queue
}

func (h *queueIndex) len() int { return len(h.heap) }

func (h *queueIndex) top() *queue { return h.heap[0] }

func less(a, b *queue) bool {
	if a.start != b.start {
		return a.start < b.start
	}
	if a.width != b.width {
		return a.width < b.width
	}
	return a.index < b.index
}

func (h *queueIndex) push(q *queue) {
	q.heapPos = len(h.heap)
	h.heap = append(h.heap, q)
	h.up(q.heapPos)
}

func (h *queueIndex) remove(q *queue) {
	i, last := q.heapPos, len(h.heap)-1
	if i != last {
		h.swap(i, last)
	}
	h.heap[last] = nil
	h.heap = h.heap[:last]
	q.heapPos = -1
	if i != last {
		h.fixAt(i)
	}
}

// fix restores the order after q's virtual start time changed.
func (h *queueIndex) fix(q *queue) { h.fixAt(q.heapPos) }

func (h *queueIndex) fixAt(i int) {
	if !h.up(i) {
		h.down(i)
	}
}

func (h *queueIndex) up(i int) (moved bool) {
	for i > 0 {
		parent := (i - 1) / 2
		if !less(h.heap[i], h.heap[parent]) {
			break
		}
		h.swap(i, parent)
		i, moved = parent, true
	}
	return moved
}

func (h *queueIndex) down(i int) {
	n := len(h.heap)
	for {
		smallest, l, r := i, 2*i+1, 2*i+2
		if l < n && less(h.heap[l], h.heap[smallest]) {
			smallest = l
		}
		if r < n && less(h.heap[r], h.heap[smallest]) {
			smallest = r
		}
		if smallest == i {
			return
		}
		h.swap(i, smallest)
		i = smallest
	}
}

func (h *queueIndex) swap(i, j int) {
	h.heap[i], h.heap[j] = h.heap[j], h.heap[i]
	h.heap[i].heapPos = i
	h.heap[j].heapPos = j
}
