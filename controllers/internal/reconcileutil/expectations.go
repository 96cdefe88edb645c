package reconcileutil

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ExpectationTimeout bounds how long a reconciler waits for the cache to show one of its
// writes (the object may have been deleted before the informer saw it).
const ExpectationTimeout = 10 * time.Second

// Expectations remembers the operator's writes until an event shows the cache holds them (the
// informer updates its store before it calls the handlers), so that the next decision is not
// taken on a cache that predates them: that would repeat a creation (AlreadyExists) or a repair
// (Conflict) that already succeeded.
//
// The event of a write may reach Observe before the writer calls Expect, so Observe records
// what it sees and Wait matches both sides. It is safe for concurrent use.
type Expectations struct {
	timeout time.Duration
	clock   clock.PassiveClock

	mu sync.Mutex
	// pending are the writes not yet seen, by uid: the generation each write produced and
	// when to stop waiting for it.
	pending map[types.UID]expected
	// seen is the highest generation an event showed for each uid since the last wait.
	seen map[types.UID]int64
}

// expected is a write not yet seen.
type expected struct {
	generation int64
	deadline   time.Time
}

// NewExpectations returns Expectations that give up on a write after timeout, as clk tells.
func NewExpectations(timeout time.Duration, clk clock.PassiveClock) *Expectations {
	return &Expectations{timeout: timeout, clock: clk, pending: map[types.UID]expected{}, seen: map[types.UID]int64{}}
}

// Expect records a successful write of obj, as the API server returned it.
func (e *Expectations) Expect(obj client.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pending[obj.GetUID()] = expected{generation: obj.GetGeneration(), deadline: e.clock.Now().Add(e.timeout)}
}

// Observe records that the cache holds obj (called from the event handlers).
func (e *Expectations) Observe(obj client.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen[obj.GetUID()] = max(e.seen[obj.GetUID()], obj.GetGeneration())
}

// Wait returns how long to wait for the longest pending write, 0 when the cache shows them
// all. Writes seen or expired are dropped, and so is what was seen: a later write can only be
// matched by a later event.
func (e *Expectations) Wait() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	var longest time.Duration
	for uid, x := range e.pending {
		if gen, ok := e.seen[uid]; ok && gen >= x.generation {
			delete(e.pending, uid)
			continue
		}
		left := x.deadline.Sub(now)
		if left <= 0 {
			delete(e.pending, uid)
			continue
		}
		longest = max(longest, left)
	}
	clear(e.seen)
	return longest
}
