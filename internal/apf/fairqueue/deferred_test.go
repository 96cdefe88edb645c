package fairqueue

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// twin is one request as seen by two sets: the one that defers starts on an idle set, and
// the one that never does.
type twin struct {
	id         int
	inDeferred Request
	inPlain    Request
}

// TestDeferredStartIsInvisible drives two sets through the same random operations (starts,
// enqueues, dispatches, removals, finishes, at increasing times); one defers the starts on an
// idle set, the other never does. After every operation they must
// agree on everything observable: the head, counts, virtual time and every queue's state.
// Every request of the set that never defers joins the queue referenceChoice names (fewest
// waiting plus executing requests in the hand), so equal states mean the deferred starts and
// their later booking follow that rule too.
// Observing books a pending deferred request, so the sets are compared after a random quarter
// of the operations, and some deferred requests finish without ever being booked.
func TestDeferredStartIsInvisible(t *testing.T) {
	for _, cfg := range []Config{
		{QueuesPerWidth: 1, QueueLengthLimit: 4, ServiceTimeGuess: sec},
		{QueuesPerWidth: 8, HandSize: 3, QueueLengthLimit: 4, ServiceTimeGuess: sec},
	} {
		deferred, unbooked := 0, 0
		for seed := range uint64(40) {
			d, u := runTwins(t, cfg, rand.New(rand.NewPCG(seed, 7)))
			deferred, unbooked = deferred+d, unbooked+u
		}
		t.Logf("%+v: %d starts deferred, %d finished unbooked", cfg, deferred, unbooked)
		if deferred < 100 || unbooked < 20 {
			t.Fatalf("%d starts deferred, %d finished unbooked: the test exercised too little", deferred, unbooked)
		}
	}
}

// runTwins returns how many starts were deferred and how many of those finished unbooked.
func runTwins(t *testing.T, cfg Config, rng *rand.Rand) (deferredStarts, unbooked int) {
	t.Helper()
	deferring, plain := newSet(t, cfg), newSet(t, cfg)
	plain.noDefer = true
	var waiting, executing []*twin
	now := time.Duration(0)
	for step := range 2000 {
		now += time.Duration(rng.IntN(3)) * time.Millisecond // equal times happen too
		// Mostly starts and finishes, so that the sets are often idle and starts get deferred.
		switch op := [...]int{0, 0, 0, 0, 1, 2, 2, 2, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4}[rng.IntN(18)]; {
		case op == 0 && plain.Waiting() == 0: // a fast-path admission
			tw := &twin{id: step}
			hash, width := rng.Uint64(), 1+rng.IntN(MaxWidth)
			deferring.Start(now, &tw.inDeferred, hash, width)
			if tw.inDeferred.token != 0 {
				deferredStarts++
			}
			want := referenceChoice(plain, hash, width)
			plain.Start(now, &tw.inPlain, hash, width)
			checkChoice(t, step, &tw.inPlain, want)
			executing = append(executing, tw)
		case op <= 1:
			tw := &twin{id: step}
			tw.inDeferred.Owner, tw.inPlain.Owner = tw, tw
			hash, width := rng.Uint64(), 1+rng.IntN(MaxWidth)
			want := referenceChoice(plain, hash, width)
			a, b := deferring.Enqueue(now, &tw.inDeferred, hash, width), plain.Enqueue(now, &tw.inPlain, hash, width)
			if a != b {
				t.Fatalf("step %d: Enqueue %v in the deferring set, %v in the plain one", step, a, b)
			}
			if a {
				checkChoice(t, step, &tw.inPlain, want)
				waiting = append(waiting, tw)
			}
		case op == 2 && len(waiting) > 0:
			a, b := deferring.Dispatch(now), plain.Dispatch(now)
			if a.Owner != b.Owner {
				t.Fatalf("step %d: dispatched %v in the deferring set, %v in the plain one", step, a.Owner, b.Owner)
			}
			tw := a.Owner.(*twin)
			waiting = slices.DeleteFunc(waiting, func(w *twin) bool { return w == tw })
			executing = append(executing, tw)
		case op == 3 && len(waiting) > 0:
			i := rng.IntN(len(waiting))
			deferring.Remove(now, &waiting[i].inDeferred)
			plain.Remove(now, &waiting[i].inPlain)
			waiting = slices.Delete(waiting, i, i+1)
		case op == 4 && len(executing) > 0:
			i := rng.IntN(len(executing))
			tw, service := executing[i], time.Duration(rng.IntN(2000))*time.Millisecond
			if tw.inDeferred.token != 0 && deferring.deferred.state == deferredPending {
				unbooked++
			}
			deferring.Finish(now, &tw.inDeferred, service)
			plain.Finish(now, &tw.inPlain, service)
			executing = slices.Delete(executing, i, i+1)
		}
		if rng.IntN(4) == 0 {
			compareSets(t, step, deferring, plain)
		}
	}
	compareSets(t, -1, deferring, plain)
	return deferredStarts, unbooked
}

// checkChoice fails unless r is in queue want (an index within its width).
func checkChoice(t *testing.T, step int, r *Request, want int) {
	t.Helper()
	if r.queue == nil || r.queue.index != want {
		t.Fatalf("step %d: request joined queue %v, want %d: the first of the fewest waiting plus executing", step, r.queue, want)
	}
}

func compareSets(t *testing.T, step int, deferring, plain *QueueSet) {
	t.Helper()
	if a, b := deferring.Waiting(), plain.Waiting(); a != b {
		t.Fatalf("step %d: %d waiting in the deferring set, %d in the plain one", step, a, b)
	}
	if a, b := deferring.ExecutingWidth(), plain.ExecutingWidth(); a != b {
		t.Fatalf("step %d: executing width %d in the deferring set, %d in the plain one", step, a, b)
	}
	if a, b := deferring.Idle(), plain.Idle(); a != b {
		t.Fatalf("step %d: idle %v in the deferring set, %v in the plain one", step, a, b)
	}
	// Virtual time may restart from a different origin after an idle moment (see deferred.go);
	// every decision compares start times with each other and with R, so those differences
	// must agree.
	ra, rb := deferring.VirtualTime(), plain.VirtualTime()
	a, b := deferring.AppendState(nil), plain.AppendState(nil)
	for i := range a {
		a[i].VirtualStart -= ra
	}
	for i := range b {
		b[i].VirtualStart -= rb
	}
	if !slices.EqualFunc(a, b, sameQueueState) {
		t.Fatalf("step %d: queues differ (start times relative to R):\ndeferring %+v\nplain     %+v", step, a, b)
	}
	var ownerA, ownerB any
	if h := deferring.Head(); h != nil {
		ownerA = h.Owner
	}
	if h := plain.Head(); h != nil {
		ownerB = h.Owner
	}
	if ownerA != ownerB {
		t.Fatalf("step %d: head %v in the deferring set, %v in the plain one", step, ownerA, ownerB)
	}
}

// sameQueueState compares queue states, start times within rounding.
func sameQueueState(a, b QueueState) bool {
	d := a.VirtualStart - b.VirtualStart
	a.VirtualStart, b.VirtualStart = 0, 0
	return a == b && d < 1e-9 && d > -1e-9
}
