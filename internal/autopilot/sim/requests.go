package sim

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// settleTimeout is how long, in real time, the engine may take to account for one event's
// requests before the run fails (it takes microseconds; only a bug takes this long).
const settleTimeout = 30 * time.Second

// job is one simulated request.
type job struct {
	id      uint64
	level   int
	arrival time.Duration
	service time.Duration
	attrs   *request.Attributes
	res     apf.Result
	release chan struct{}

	// Written by the request's goroutine under requests.mu, read after settle.
	started bool
	ended   bool
	startAt time.Duration
	outcome dispatch.Outcome
	endAt   time.Duration
}

// requests runs jobs in their own goroutines against the engine and knows, after settle,
// which started and which ended.
type requests struct {
	eng *apf.Engine
	now func() time.Duration

	mu       sync.Mutex
	pending  int // submitted, neither started nor ended
	running  int // started, not ended
	released int // released, not yet ended
	started  []*job
	ended    []*job
}

// submit starts j's request; its exec blocks until release.
func (r *requests) submit(j *job) {
	j.release = make(chan struct{})
	r.mu.Lock()
	r.pending++
	r.mu.Unlock()
	go r.run(j)
}

func (r *requests) run(j *job) {
	out := r.eng.HandleInto(context.Background(), j.attrs, &j.res, func() {
		r.mu.Lock()
		j.started, j.startAt = true, r.now()
		r.pending--
		r.running++
		r.started = append(r.started, j)
		r.mu.Unlock()
		<-j.release
	})
	r.mu.Lock()
	j.ended, j.outcome, j.endAt = true, out, r.now()
	if j.started {
		r.running--
		r.released--
	} else {
		r.pending--
	}
	r.ended = append(r.ended, j)
	r.mu.Unlock()
}

// finish lets an executing job's request return.
func (r *requests) finish(j *job) {
	r.mu.Lock()
	r.released++
	r.mu.Unlock()
	close(j.release)
}

// settle waits until every submitted request is accounted for: started, ended, or waiting in
// the engine's queues, and every released one has ended. Only then is the next event's
// outcome independent of goroutine scheduling.
func (r *requests) settle() error {
	deadline := time.Now().Add(settleTimeout)
	for i := 0; ; i++ {
		r.mu.Lock()
		pending, running, released := r.pending, r.running, r.released
		r.mu.Unlock()
		if released == 0 && pending == 0 {
			return nil // nothing can wait in a queue
		}
		// The first look skips the engine's state: the goroutines just woken have rarely run yet.
		if released == 0 && i > 0 {
			st := r.eng.State()
			r.mu.Lock()
			same := pending == r.pending && running == r.running && released == r.released
			r.mu.Unlock()
			if same && st.Waiting == pending && st.ExecutingWidth == running {
				return nil
			}
		}
		if i%1024 == 1023 && time.Now().After(deadline) {
			return fmt.Errorf("requests did not settle in %v: pending %d running %d released %d", settleTimeout, pending, running, released)
		}
		runtime.Gosched()
	}
}

// take returns the jobs that started and those that ended since the last call.
func (r *requests) take() (started, ended []*job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	started, ended = r.started, r.ended
	r.started, r.ended = nil, nil
	return started, ended
}
