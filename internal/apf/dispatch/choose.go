package dispatch

import "time"

// dispatchLocked dispatches waiting requests while seats are free: the proposal's two-stage
// choice of a level among those whose limits let their head dispatch, fair queuing within it,
// and the head dispatched only if it fits.
func (d *Dispatcher) dispatchLocked(now time.Duration) {
	for d.waiting > 0 && d.executing < d.scl {
		lv := d.chooseLevelLocked()
		if lv == nil {
			break // the heads wait for seats or limits; nothing overtakes them
		}
		d.dispatchHeadLocked(lv, now)
	}
	if d.testCheck != nil {
		d.testCheck.roundEnded()
	}
}

// dispatchHeadLocked dispatches the request fair queuing picks at lv and wakes it up.
func (d *Dispatcher) dispatchHeadLocked(lv *level, now time.Duration) {
	set := lv.headSet()
	w := set.Head().Owner.(*waiter)
	if d.testCheck != nil {
		d.testCheck.dispatching(lv, w.width)
	}
	set.Dispatch(now)
	d.fifo.remove(w)
	d.leftQueueLocked(w)
	d.startedLocked(lv, w.width)
	w.state, w.dispatchedAt = stateDispatched, now
	w.flow.dispatchedLocked(max(now-w.arrival, 0))
	w.ready <- struct{}{}
}

// chooseLevelLocked returns the level whose head is dispatched now, or nil. Among the levels
// whose limits allow their head (ineligible ones are skipped and hold nobody up) it follows
// the proposal's order: the first, highest priority first, below its ACV; else the
// highest-priority one. When that level's head does not fit yet it waits and no other
// borrower overtakes it; only a head fitting in its own level's unlendable seats, which no
// other level may take, still goes.
func (d *Dispatcher) chooseLevelLocked() *level {
	var first *level // the highest-priority eligible level at or above its ACV
	var fits bool    // first's head fits now
	var blocked bool // an eligible head below its ACV waits
	for _, lv := range d.order {
		if lv.waiting == 0 {
			continue
		}
		v := d.verdictLocked(lv, lv.headWidth())
		switch {
		case v == ineligible:
		case v == ownSeats:
			return lv
		case lv.executing >= lv.acv:
			if first == nil {
				first, fits = lv, v == borrows
			}
		case v == borrows && !blocked:
			return lv
		default:
			blocked = true
		}
	}
	if blocked || !fits {
		return nil
	}
	return first
}
