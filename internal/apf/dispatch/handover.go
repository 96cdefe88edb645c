package dispatch

import (
	"sync/atomic"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf/fairqueue"
)

// A finish that finds the lock taken does not wait for it: it hands its bookkeeping to the
// goroutine holding the lock and returns (see "Finishing" in the package doc). The holder
// applies every handed-over finish before it releases the lock, and after releasing it looks
// once more, so none is ever left behind: a finish hands over with an atomic push and then
// fails to take the lock, so the push comes before the holder's release in Go's sequentially
// consistent order of atomic operations, and the holder's look after the release sees it; if
// another goroutine took the lock in between, that one looks when it releases in turn.

// handedFinish is one finish handed over to the lock holder.
type handedFinish struct {
	next         *handedFinish
	flow         *flow
	set          *fairqueue.QueueSet
	seat         fairqueue.Request // a copy: the finishing goroutine's seat may be reused at once
	width        int
	dispatchedAt time.Duration
	at           time.Duration // when the request finished
	late         bool          // its flow's series is to be deleted once the lock is released
}

// handoverStack is the lock-free stack of handed-over finishes (a Treiber stack that is only
// ever emptied whole, so it has no ABA problem).
type handoverStack struct {
	head atomic.Pointer[handedFinish]
}

func (s *handoverStack) push(h *handedFinish) {
	for {
		old := s.head.Load()
		h.next = old
		if s.head.CompareAndSwap(old, h) {
			return
		}
	}
}

// takeAll empties the stack and returns its finishes, the last pushed first.
func (s *handoverStack) takeAll() *handedFinish { return s.head.Swap(nil) }

func (s *handoverStack) empty() bool { return s.head.Load() == nil }

// handOver gives a finish to the goroutine holding d.mu, or applies it if the lock has been
// released meanwhile.
func (d *Dispatcher) handOver(f *flow, set *fairqueue.QueueSet, seat *fairqueue.Request, width int,
	dispatchedAt, now time.Duration) {
	h := d.handed.Get().(*handedFinish)
	h.flow, h.set, h.seat, h.width, h.dispatchedAt, h.at = f, set, *seat, width, dispatchedAt, now
	h.seat.Owner = nil
	d.handover.push(h)
	if d.mu.TryLock() {
		d.unlock() // the holder was gone before it could see h: apply it here
	}
}

// lock takes d.mu and applies the finishes handed over until then, so that whoever holds the
// lock sees every seat that has been released.
func (d *Dispatcher) lock() {
	if !d.mu.TryLock() {
		d.lockContended()
	}
	d.applyHanded()
}

// applyHanded applies the handed-over finishes, if any; d.mu is held.
func (d *Dispatcher) applyHanded() {
	if d.handover.head.Load() != nil {
		d.applyHandedLocked()
	}
}

// unlock applies the finishes handed over while d.mu was held, releases it, and takes it back
// to apply those handed over meanwhile by goroutines that found it still held (see above).
// Series left unused by those finishes are deleted after the lock is released, as finish
// deletes them.
func (d *Dispatcher) unlock() {
	if d.handedOver() {
		d.unlockHanded()
		return
	}
	d.mu.Unlock()
	d.afterUnlock()
}

// handedOver reports whether unlock has more to do than release the lock. Admission and
// finish, once per request each, inline unlock by hand around it: unlock itself is too large
// for the compiler to inline, and the call cost about 1 ns each (test/benchmark, Uncontended).
func (d *Dispatcher) handedOver() bool { return d.handover.head.Load() != nil || d.late != nil }

// afterUnlock applies what was handed over while the lock was being released.
func (d *Dispatcher) afterUnlock() {
	if d.handover.head.Load() != nil {
		d.relock()
	}
}

// relock takes d.mu back, if no one else has, to apply what was handed over while it was
// being released.
func (d *Dispatcher) relock() {
	if d.mu.TryLock() {
		d.unlockHanded()
	}
}

// unlockHanded is unlock once something was handed over; d.mu is held.
func (d *Dispatcher) unlockHanded() {
	for {
		if !d.handover.empty() {
			d.applyHandedLocked()
		}
		late := d.late
		d.late = nil
		d.mu.Unlock()
		d.deleteLate(late)
		if d.handover.empty() || !d.mu.TryLock() {
			return
		}
	}
}

// applyHandedLocked applies the finishes handed over so far.
func (d *Dispatcher) applyHandedLocked() {
	for h := d.handover.takeAll(); h != nil; {
		next := h.next
		h.late = d.finishLocked(h.flow, h.set, &h.seat, h.width, h.dispatchedAt, h.at)
		if h.late {
			h.next, d.late = d.late, h
		} else {
			d.recycle(h)
		}
		h = next
	}
}

// deleteLate deletes the unused series of the handed-over finishes in list; d.mu is not held.
func (d *Dispatcher) deleteLate(list *handedFinish) {
	for h := list; h != nil; {
		next := h.next
		d.deleteIfUnused(h.flow, true)
		d.recycle(h)
		h = next
	}
}

func (d *Dispatcher) recycle(h *handedFinish) {
	*h = handedFinish{}
	d.handed.Put(h)
}
