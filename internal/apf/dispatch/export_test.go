package dispatch

import "sync/atomic"

// InvariantCounts counts what CheckInvariants checked.
type InvariantCounts struct {
	Dispatches, Borrowed, Rounds atomic.Int64
}

// CheckInvariants makes d report through fail, under its lock:
//   - at every dispatch, a level going above its maxCL (unless the request is all it runs),
//     above SCL, or a dispatch beyond its minCL that takes seats another level reserves;
//   - running totals (reserved seats, sum of minCL) that differ from a recount;
//   - at the end of every dispatching round, a level whose head fits both in its own unlendable
//     seats and in the free seats but still waits.
//
// Call it before any traffic.
func CheckInvariants(d *Dispatcher, fail func(format string, args ...any)) *InvariantCounts {
	c := &invariantChecker{d: d, fail: fail, counts: &InvariantCounts{}}
	d.mu.Lock()
	d.testCheck = c
	d.mu.Unlock()
	return c.counts
}

type invariantChecker struct {
	d      *Dispatcher
	fail   func(format string, args ...any)
	counts *InvariantCounts
}

func (c *invariantChecker) dispatching(lv *level, w int) {
	d := c.d
	c.counts.Dispatches.Add(1)
	c.checkTotals()
	after := lv.executing + w
	if after > lv.maxCL && after != w {
		c.fail("level %s: %d executing after a dispatch of width %d, above its maxCL %d", lv.name, after, w, lv.maxCL)
	}
	if d.executing+w > d.scl {
		c.fail("level %s: dispatch of width %d with %d of SCL %d executing", lv.name, w, d.executing, d.scl)
	}
	if after <= lv.minCL {
		return
	}
	c.counts.Borrowed.Add(1)
	if others := d.reserved - lv.reserve(); d.executing+w+others > d.scl {
		c.fail("level %s: borrowing dispatch of width %d takes reserved seats: %d executing, others reserve %d, SCL %d",
			lv.name, w, d.executing, others, d.scl)
	}
}

func (c *invariantChecker) roundEnded() {
	d := c.d
	c.counts.Rounds.Add(1)
	c.checkTotals()
	for _, lv := range d.order {
		if lv.waiting == 0 {
			continue
		}
		if w := lv.headWidth(); lv.executing+w <= lv.minCL && w <= d.scl-d.executing {
			c.fail("level %s: head of width %d waits with %d executing, minCL %d, %d seats free",
				lv.name, w, lv.executing, lv.minCL, d.scl-d.executing)
		}
	}
}

// checkTotals recounts the running totals: every level that reserves seats or counts in
// minSum is in the dispatch order (a drained removed level has minCL 0).
func (c *invariantChecker) checkTotals() {
	d := c.d
	reserved, minSum := 0, 0
	for _, lv := range d.order {
		reserved += lv.reserve()
		minSum += lv.minCL
	}
	if reserved != d.reserved || minSum != d.minSum {
		c.fail("running totals reserved %d, minCL sum %d; recount %d and %d", d.reserved, d.minSum, reserved, minSum)
	}
}
