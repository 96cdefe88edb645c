package dispatch

import (
	"context"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/fairqueue"
)

type waiterState uint8

const (
	stateWaiting waiterState = iota
	stateDispatched
	stateTimedOut
	stateCancelled
)

// waiter is the pooled state of a request that waits in a queue.
type waiter struct {
	seat       fairqueue.Request // seat.Owner == the waiter
	prev, next *waiter           // in the dispatcher's arrival-ordered list
	// ready receives exactly one value when the request is dispatched or times out; it is
	// empty whenever the waiter is in the pool.
	ready chan struct{}

	flow         *flow
	set          *fairqueue.QueueSet
	width        int
	arrival      time.Duration
	dispatchedAt time.Duration
	state        waiterState // guarded by Dispatcher.mu
}

func newWaiter() *waiter {
	w := &waiter{ready: make(chan struct{}, 1)}
	w.seat.Owner = w
	return w
}

// waitLocked queues a request, or rejects it when its queue is full, and waits for the
// decision. It unlocks d.mu.
func (d *Dispatcher) waitLocked(ctx context.Context, f *flow, hash uint64, width int, now time.Duration, exec func()) Outcome {
	w := d.waiters.Get().(*waiter)
	lv := f.level
	set := lv.active()
	if !set.Enqueue(now, &w.seat, hash, width) {
		d.dispatchLocked(now) // expiry may have removed a blocking head
		f.metrics.RejectedQueueFull()
		late := d.releaseSeriesLocked(f)
		d.unlock()
		d.waiters.Put(w)
		d.deleteIfUnused(f, late)
		return RejectedQueueFull
	}
	w.flow, w.set, w.width, w.arrival, w.state = f, set, width, now, stateWaiting
	d.fifo.pushBack(w)
	lv.waiting++
	if d.waiting++; d.waiting == 1 {
		d.contended.Store(true)
	}
	f.metrics.Enqueued()
	d.dispatchLocked(now)
	d.armTimerLocked(now)
	d.unlock()

	select {
	case <-w.ready:
	case <-ctx.Done():
		if d.cancel(w) {
			return d.rejected(w, RejectedCancelled)
		}
		<-w.ready // decided before the cancellation was seen
	}
	if w.state == stateTimedOut {
		return d.rejected(w, RejectedTimeout)
	}
	f.metrics.Dequeued()
	d.execute(f, set, &w.seat, width, w.dispatchedAt, exec)
	d.release(w)
	return Executed
}

// cancel takes a still-waiting request out of its queue and reports whether it did.
func (d *Dispatcher) cancel(w *waiter) bool {
	now := d.now()
	d.lock()
	defer d.unlock()
	if w.state != stateWaiting {
		return false
	}
	d.removeLocked(now, w)
	w.state = stateCancelled
	d.dispatchLocked(now) // it may have been a head too wide to dispatch
	return true
}

// rejected records the rejection of a request that waited and recycles its waiter.
func (d *Dispatcher) rejected(w *waiter, o Outcome) Outcome {
	m := w.flow.metrics
	m.Dequeued()
	if o == RejectedTimeout {
		m.RejectedTimeout()
	} else {
		m.RejectedCancelled()
	}
	d.releaseSeries(w.flow)
	d.release(w)
	return o
}

func (d *Dispatcher) release(w *waiter) {
	w.flow, w.set = nil, nil
	d.waiters.Put(w)
}

// removeLocked takes a waiting request out of its queue and the arrival list.
func (d *Dispatcher) removeLocked(now time.Duration, w *waiter) {
	w.set.Remove(now, &w.seat)
	d.fifo.remove(w)
	d.leftQueueLocked(w)
}

// leftQueueLocked updates the counts after a waiting request left its queue.
func (d *Dispatcher) leftQueueLocked(w *waiter) {
	lv := w.flow.level
	if d.waiting--; d.waiting == 0 {
		d.contended.Store(false)
	}
	lv.waiting--
	if w.set != lv.active() && w.set.Waiting() == 0 {
		lv.pruneDrained()
	}
	if lv.retired && lv.waiting == 0 {
		d.dropFromOrderLocked(lv)
		d.setLimitsLocked(lv, 0, lv.maxCL) // drained: it reserves nothing any more
	}
	d.stopTimerLocked()
}

func (d *Dispatcher) dropFromOrderLocked(lv *level) {
	for i, o := range d.order {
		if o == lv {
			d.order = append(d.order[:i], d.order[i+1:]...)
			return
		}
	}
}

// expireLocked rejects every request that has waited the wait limit or longer.
func (d *Dispatcher) expireLocked(now time.Duration) {
	for w := d.fifo.head; w != nil && now-w.arrival >= d.waitLimit; w = d.fifo.head {
		d.removeLocked(now, w)
		w.state = stateTimedOut
		w.ready <- struct{}{}
	}
}

// armTimerLocked makes sure the shared timer will fire by the oldest waiter's deadline, so a
// quiet server rejects it on time. A timer armed for a waiter that has left stays armed while
// others wait: it fires at most one wait limit after the oldest of them arrived, and then
// re-arms itself for the new oldest. Re-arming whenever the oldest leaves would cost a timer
// operation per dispatch under load.
func (d *Dispatcher) armTimerLocked(now time.Duration) {
	if d.timerArmed || d.fifo.head == nil {
		return
	}
	delay := max(d.fifo.head.arrival+d.waitLimit-now, 0)
	if d.timer == nil {
		clock := d.clock
		if clock == nil {
			clock = RealClock{}
		}
		d.timer = clock.AfterFunc(delay, d.onTimer)
	} else {
		d.timer.Reset(delay)
	}
	d.timerArmed = true
}

// stopTimerLocked stops the shared timer once no request waits: nothing is left for it to
// expire. If it has fired already, expireOnTimer finds nothing to do.
func (d *Dispatcher) stopTimerLocked() {
	if d.timerArmed && d.waiting == 0 {
		d.timer.Stop()
		d.timerArmed = false
	}
}

func (d *Dispatcher) expireOnTimer() {
	now := d.now()
	d.lock()
	d.timerArmed = false
	d.expireLocked(now)
	d.dispatchLocked(now)
	d.armTimerLocked(now)
	if !d.timerArmed {
		d.timer.Stop() // a Reset while this call waited for the lock re-armed it for nothing
	}
	d.unlock()
}

// waiterList is the intrusive, arrival-ordered list of all waiting requests.
type waiterList struct {
	head, tail *waiter
}

func (l *waiterList) pushBack(w *waiter) {
	w.prev, w.next = l.tail, nil
	if l.tail == nil {
		l.head = w
	} else {
		l.tail.next = w
	}
	l.tail = w
}

func (l *waiterList) remove(w *waiter) {
	if w.prev == nil {
		l.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		l.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next = nil, nil
}
