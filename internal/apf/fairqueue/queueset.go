package fairqueue

import (
	"fmt"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/shufflesharding"
)

// DefaultServiceTimeGuess is the proposal's service-time guess G: the one-minute service time
// limit (see the package doc).
const DefaultServiceTimeGuess = time.Minute

// MaxWidth is the widest request: a mutating request takes 2 seats, a read-only one 1.
const MaxWidth = 2

// Config is the queuing configuration of one priority level.
type Config struct {
	// QueuesPerWidth is the number of queues for each width, at least 1.
	QueuesPerWidth int
	// HandSize is the number of queues dealt to a flow; required when QueuesPerWidth > 1,
	// ignored otherwise.
	HandSize int
	// QueueLengthLimit is how many requests a queue may hold waiting, at least 1.
	QueueLengthLimit int
	// ServiceTimeGuess is G; 0 means DefaultServiceTimeGuess.
	ServiceTimeGuess time.Duration
}

// QueueSet is the queues of one priority level (see the package doc). Its methods must be
// serialized by the owner.
type QueueSet struct {
	// The fields an idle set's Start and Finish read come first, in one cache line.
	deferred    deferredStart // see deferred.go
	nextToken   uint64
	activeWidth int  // NEQ: widths of the non-idle queues, summed
	noDefer     bool // tests compare sets with and without deferred starts

	cfg    Config
	dealer *shufflesharding.Dealer // nil with one queue per width
	hands  []cachedHand            // recent flows' hands (hands.go); nil: deal every time
	guess  float64                 // G in nanoseconds
	queues []queue                 // width w uses queues[(w-1)*QueuesPerWidth : w*QueuesPerWidth]
	index  queueIndex

	waiting        int
	executingWidth int // width of dispatched, unfinished requests

	virtualNow float64       // R at lastSync, virtual nanoseconds
	lastSync   time.Duration // owner's time of the last advance of R
}

// New returns an empty QueueSet, or the reason cfg cannot be used.
func New(cfg Config) (*QueueSet, error) {
	if cfg.QueuesPerWidth < 1 {
		return nil, fmt.Errorf("queuesPerWidth %d: must be at least 1", cfg.QueuesPerWidth)
	}
	if cfg.QueueLengthLimit < 1 {
		return nil, fmt.Errorf("queueLengthLimit %d: must be at least 1", cfg.QueueLengthLimit)
	}
	if cfg.ServiceTimeGuess < 0 {
		return nil, fmt.Errorf("serviceTimeGuess %v: must not be negative", cfg.ServiceTimeGuess)
	}
	if cfg.ServiceTimeGuess == 0 {
		cfg.ServiceTimeGuess = DefaultServiceTimeGuess
	}
	s := &QueueSet{cfg: cfg, guess: float64(cfg.ServiceTimeGuess)}
	if cfg.QueuesPerWidth > 1 {
		d, err := shufflesharding.NewDealer(cfg.QueuesPerWidth, cfg.HandSize)
		if err != nil {
			return nil, err
		}
		s.dealer = d
		s.hands = newHandCache(cfg)
	}
	s.queues = make([]queue, MaxWidth*cfg.QueuesPerWidth)
	s.index.heap = make([]*queue, 0, len(s.queues)) // never grows on the request path
	for i := range s.queues {
		s.queues[i] = queue{index: i % cfg.QueuesPerWidth, width: 1 + i/cfg.QueuesPerWidth, heapPos: -1}
	}
	return s, nil
}

// Config returns the set's configuration, defaults applied.
func (s *QueueSet) Config() Config { return s.cfg }

// SetQueueLengthLimit changes the queue length limit (at least 1). Queues already longer keep
// their requests; arrivals are rejected until they are shorter.
func (s *QueueSet) SetQueueLengthLimit(n int) { s.cfg.QueueLengthLimit = max(n, 1) }

// Waiting returns the number of waiting requests.
func (s *QueueSet) Waiting() int { return s.waiting }

// ExecutingWidth returns the width of the dispatched requests that have not finished.
func (s *QueueSet) ExecutingWidth() int {
	s.book()
	return s.executingWidth
}

// Idle reports whether no request waits or executes.
func (s *QueueSet) Idle() bool {
	s.book()
	return s.activeWidth == 0
}

// Enqueue places r, of the given width (clamped to 1..MaxWidth), in the shortest queue of the
// hand dealt for flowHash. It returns false, leaving everything unchanged, when that queue
// already holds QueueLengthLimit waiting requests.
func (s *QueueSet) Enqueue(now time.Duration, r *Request, flowHash uint64, width int) bool {
	s.book()
	q := s.choose(flowHash, width)
	if q.waiting >= s.cfg.QueueLengthLimit {
		return false
	}
	s.advance(now)
	s.activate(q)
	r.token = 0
	q.push(r)
	s.waiting++
	if q.heapPos < 0 {
		s.index.push(q)
	}
	return true
}

// Start admits r and dispatches it at once, as Enqueue followed by Dispatch would when no
// request of its width waits in the set; the owner calls it only then. It never rejects. On
// an idle set, r's queue is only chosen if another operation comes before its Finish (see
// deferred.go); until then r.Width() is 0.
func (s *QueueSet) Start(now time.Duration, r *Request, flowHash uint64, width int) {
	s.book()
	if s.startDeferred(now, r, flowHash, width) {
		return
	}
	r.token = 0
	q := s.choose(flowHash, width)
	s.advance(now)
	s.activate(q)
	r.queue = q
	s.begin(q)
}

// Head returns the request fair queuing dispatches next, or nil when none waits. Its Width
// tells the owner whether it fits in the free seats.
func (s *QueueSet) Head() *Request {
	s.book()
	if s.index.len() == 0 {
		return nil
	}
	return s.index.top().head
}

// Dispatch removes the Head request from its queue, counts it as executing and returns it
// (nil when none waits).
func (s *QueueSet) Dispatch(now time.Duration) *Request {
	s.book()
	if s.index.len() == 0 {
		return nil
	}
	q := s.index.top()
	r := q.head
	s.advance(now)
	q.unlink(r)
	s.waiting--
	s.begin(q)
	return r
}

// Remove takes a waiting request out of its queue (timeout or cancellation). The requests
// behind it move up; nothing else changes.
func (s *QueueSet) Remove(now time.Duration, r *Request) {
	s.book()
	q := r.queue
	s.advance(now)
	q.unlink(r)
	r.queue = nil
	s.waiting--
	if q.waiting == 0 {
		s.index.remove(q)
	}
	s.deactivateIfIdle(q)
}

// Finish records that the dispatched request r finished after the given service time: the
// queue's virtual start time is corrected by G - service.
func (s *QueueSet) Finish(now time.Duration, r *Request, service time.Duration) {
	if r.token != 0 {
		token := r.token
		r.token = 0
		s.finishDeferred(token, now, service)
		return
	}
	s.book()
	s.finish(now, r, service)
}

// finish is Finish for a booked request.
func (s *QueueSet) finish(now time.Duration, r *Request, service time.Duration) {
	q := r.queue
	r.queue = nil
	s.advance(now)
	q.executing--
	s.executingWidth -= q.width
	q.start -= s.guess - float64(max(service, 0))
	if q.heapPos >= 0 {
		s.index.fix(q)
	}
	s.deactivateIfIdle(q)
}

// choose returns the shortest queue of the flow's hand, the first dealt among equals. A
// queue's length counts its waiting and its executing requests: as in the proposal, a request
// is in its queue until it finishes.
func (s *QueueSet) choose(flowHash uint64, width int) *queue {
	width = min(max(width, 1), MaxWidth)
	n := s.cfg.QueuesPerWidth
	qs := s.queues[(width-1)*n : width*n]
	// The first card of the hand is I[0] = hash mod n; when it is empty it is the first
	// shortest queue, and the hand need not be dealt.
	first := &qs[flowHash%uint64(n)]
	if s.dealer == nil || first.idle() {
		return first
	}
	return &qs[s.shortestOfHand(qs, flowHash)]
}

// begin counts a request of q as executing and charges q the guess G.
func (s *QueueSet) begin(q *queue) {
	q.executing++
	s.executingWidth += q.width
	q.start += s.guess
	if q.heapPos >= 0 {
		if q.waiting == 0 {
			s.index.remove(q)
		} else {
			s.index.fix(q)
		}
	}
}

// activate marks an idle queue non-empty: its virtual start time becomes R(now). The caller
// has advanced R to now.
func (s *QueueSet) activate(q *queue) {
	if q.idle() {
		q.start = s.virtualNow
		s.activeWidth += q.width
	}
}

func (s *QueueSet) deactivateIfIdle(q *queue) {
	if q.idle() {
		s.activeWidth -= q.width
	}
}

// advance moves R to now at the rate executingWidth / NEQ that held since the last event.
// Times earlier than the last event (owners read the clock before they serialize) count as the
// last event's time.
func (s *QueueSet) advance(now time.Duration) {
	if now <= s.lastSync {
		return
	}
	if s.activeWidth == 0 {
		s.virtualNow = 0 // every start time is ignored while the set is idle
	} else {
		s.virtualNow += float64(now-s.lastSync) * float64(s.executingWidth) / float64(s.activeWidth)
	}
	s.lastSync = now
}
