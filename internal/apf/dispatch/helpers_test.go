package dispatch_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch/dispatchtest"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// lvl describes a RequestPriority for a test configuration; each gets a FlowSchema of the same
// name that matches everything (requests name their schema directly in these tests).
type lvl struct {
	name                        string
	level, shares, queues, hand int32
	limit                       int32
	lend                        *int32 // spec.lendablePercent; nil: absent (the engine lends every idle seat)
	borrow                      *int32 // spec.borrowingLimitPercent; nil: no limit
}

func ptr(v int32) *int32 { return &v }

func buildConfig(t testing.TB, levels ...lvl) *effective.Config {
	t.Helper()
	var rps []flowv1.RequestPriority
	var fss []flowv1.FlowSchema
	for i, l := range levels {
		spec := flowv1.RequestPrioritySpec{PriorityLevel: l.level}
		if l.level != 0 {
			spec.AssuredConcurrencyShares, spec.QueuesPerWidth, spec.QueueLengthLimit = ptr(l.shares), ptr(l.queues), ptr(l.limit)
			if l.queues > 1 {
				spec.HandSize = ptr(l.hand)
			}
			spec.LendablePercent = l.lend
			spec.BorrowingLimitPercent = l.borrow
		}
		rps = append(rps, flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: l.name}, Spec: spec})
		fss = append(fss, flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: l.name}, Spec: flowv1.FlowSchemaSpec{
			MatchingPriority: int32(100 + i), RequestPriority: flowv1.RequestPriorityReference{Name: l.name},
			Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{}}}}})
	}
	cfg := effective.Compute(rps, fss)
	for name, st := range cfg.RequestPriorityStatus {
		if !st.InEffect {
			t.Fatalf("RequestPriority %s not in effect: %s", name, st.Message)
		}
	}
	for name, st := range cfg.FlowSchemaStatus {
		if !st.InEffect {
			t.Fatalf("FlowSchema %s not in effect: %s", name, st.Message)
		}
	}
	return cfg
}

func schema(t testing.TB, cfg *effective.Config, name string) *effective.Schema {
	t.Helper()
	for _, s := range cfg.Schemas {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no schema %q", name)
	return nil
}

var epoch = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// harness runs requests in goroutines against a dispatcher on a fake clock and waits, after
// each step, until every request is settled: waiting in a queue, executing, or returned.
type harness struct {
	t     testing.TB
	d     *dispatch.Dispatcher
	clock *dispatchtest.FakeClock

	mu       sync.Mutex
	pending  int // submitted, neither started nor returned
	running  int // width of started, non-exempt requests that have not returned
	released int // released, not yet returned
	started  []*job
	finished []*job
}

type job struct {
	h        *harness
	req      dispatch.Request
	exempt   bool
	tag      string
	cancel   context.CancelFunc
	release  chan struct{}
	startAt  time.Time
	didStart bool
	outcome  dispatch.Outcome
	done     chan struct{}
}

func newHarness(t testing.TB, cfg *effective.Config, opts dispatch.Options) *harness {
	clock := dispatchtest.NewFakeClock(epoch)
	opts.Clock = clock
	return &harness{t: t, d: dispatch.New(cfg, opts), clock: clock}
}

// submit starts a request of the given schema, flow and width and waits until it settles.
func (h *harness) submit(s *effective.Schema, hash uint64, width int, tag string) *job {
	j := h.start(s, hash, width, tag)
	h.settle()
	return j
}

func (h *harness) start(s *effective.Schema, hash uint64, width int, tag string) *job {
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{h: h, req: dispatch.Request{Schema: s, FlowHash: hash, Width: width}, tag: tag,
		exempt: s != nil && s.Priority.Exempt(), cancel: cancel,
		release: make(chan struct{}), done: make(chan struct{})}
	h.mu.Lock()
	h.pending++
	h.mu.Unlock()
	go j.run(ctx)
	return j
}

func (j *job) run(ctx context.Context) {
	h := j.h
	out := h.d.Handle(ctx, &j.req, func() {
		h.mu.Lock()
		j.didStart, j.startAt = true, h.clock.Now()
		h.pending--
		if !j.exempt {
			h.running += j.req.Width
		}
		h.started = append(h.started, j)
		h.mu.Unlock()
		<-j.release
	})
	j.cancel()
	// Everything below, done included, changes under h.mu: settle, which reads the counts
	// under h.mu, never sees a request counted as ended whose done is still open.
	h.mu.Lock()
	j.outcome = out
	switch {
	case !j.didStart:
		h.pending--
	case !j.exempt:
		h.running -= j.req.Width
	}
	if j.didStart {
		h.released--
	}
	h.finished = append(h.finished, j)
	close(j.done)
	h.mu.Unlock()
}

// finish lets an executing request return and waits until everything settles.
func (j *job) finish() {
	j.h.mu.Lock()
	j.h.released++
	j.h.mu.Unlock()
	close(j.release)
	j.h.settle()
}

// shutdown ends every request of jobs: cancels the waiting ones and lets the executing ones
// (including any dispatched while the others leave) finish.
func (h *harness) shutdown(jobs []*job) {
	h.settle()
	for _, j := range jobs {
		j.cancel()
	}
	for _, j := range jobs {
		for !j.isDone() {
			h.mu.Lock()
			started := j.didStart
			if started {
				h.released++
			}
			h.mu.Unlock()
			if started {
				close(j.release)
				<-j.done
				break
			}
			runtime.Gosched()
		}
	}
	h.settle()
}

func (h *harness) settle() {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.mu.Lock()
		pending, running, released := h.pending, h.running, h.released
		h.mu.Unlock()
		st := h.d.Snapshot()
		h.mu.Lock()
		same := pending == h.pending && running == h.running && released == h.released
		h.mu.Unlock()
		if same && released == 0 && st.Waiting == pending && st.ExecutingWidth == running {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("requests did not settle: pending %d running %d released %d; dispatcher waiting %d executing %d",
				pending, running, released, st.Waiting, st.ExecutingWidth)
		}
		runtime.Gosched()
	}
}

// takeStarted returns the requests that started since the last call, in start order.
func (h *harness) takeStarted() []*job {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.started
	h.started = nil
	return s
}

func (h *harness) takeFinished() []*job {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.finished
	h.finished = nil
	return f
}

func (j *job) String() string { return fmt.Sprintf("%s(%v)", j.tag, j.req.Width) }

func (j *job) result() dispatch.Outcome {
	<-j.done
	return j.outcome
}

func (j *job) isDone() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

func levelState(t testing.TB, st dispatch.State, name string) dispatch.LevelState {
	t.Helper()
	for _, l := range st.Levels {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("no level %q in %+v", name, st)
	return dispatch.LevelState{}
}
