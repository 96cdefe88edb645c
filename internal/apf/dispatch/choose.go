package dispatch

import "time"

// dispatchLocked dispatches waiting requests while seats are free: the proposal's two-stage
// choice of a level, fair queuing within it, and the head dispatched only if its width fits.
func (d *Dispatcher) dispatchLocked(now time.Duration) {
	for d.waiting > 0 && d.executing < d.scl {
		lv := d.chooseLevelLocked()
		set := lv.headSet()
		w := set.Head().Owner.(*waiter)
		if d.executing+w.width > d.scl {
			return // the head waits for enough seats; nothing overtakes it
		}
		set.Dispatch(now)
		d.fifo.remove(w)
		d.leftQueueLocked(w)
		lv.executing += w.width
		d.executing += w.width
		w.state, w.dispatchedAt = stateDispatched, now
		w.flow.dispatchedLocked(max(now-w.arrival, 0))
		w.ready <- struct{}{}
	}
}

// chooseLevelLocked returns the first level, highest priority first, with a waiting request
// and executing width below its ACV; else the highest-priority level with a waiting request.
// The caller knows that some request waits.
func (d *Dispatcher) chooseLevelLocked() *level {
	var first *level
	for _, lv := range d.order {
		if lv.waiting == 0 {
			continue
		}
		if lv.executing < lv.acv {
			return lv
		}
		if first == nil {
			first = lv
		}
	}
	return first
}
