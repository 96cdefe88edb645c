package dispatch_test

import (
	"testing"

	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// submitN submits n requests of width 1 at schema s, each its own flow, tagged tag.
func submitN(h *harness, s *effective.Schema, n int, tag string) []*job {
	var jobs []*job
	for i := 0; i < n; i++ {
		jobs = append(jobs, h.submit(s, uint64(len(tag)*1000+i), 1, tag))
	}
	return jobs
}

func executing(t *testing.T, h *harness, name string) int {
	t.Helper()
	return levelState(t, h.d.Snapshot(), name).ExecutingWidth
}

// TestIdleLenderSeatsBorrowedThenReclaimed: SCL 10, two levels of ACV ceil(10*100/300) = 4.
// The idle lender L lends 50% (minCL 2), so the borrower B runs 4 + 2 unassigned + 2 lent = 8
// and no more. When L gets demand it takes its 2 unlent seats at once, then each seat B
// returns, up to L's ACV; only then does B get seats again.
func TestIdleLenderSeatsBorrowedThenReclaimed(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "l", level: 100, shares: 100, queues: 8, hand: 2, limit: 50, lend: ptr(50)},
		lvl{name: "b", level: 200, shares: 100, queues: 8, hand: 2, limit: 50})
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 10})
	if l := levelState(t, h.d.Snapshot(), "l"); l.AssuredConcurrency != 4 || l.MinConcurrency != 2 || l.MaxConcurrency != 10 {
		t.Fatalf("level l %+v: want ACV 4, minCL 2, maxCL 10", l)
	}
	borrowed := submitN(h, schema(t, cfg, "b"), 12, "B")
	if got := executing(t, h, "b"); got != 8 {
		t.Fatalf("borrower runs %d, want 8", got)
	}
	if ex := h.submit(cfg.MastersBackstop, 1, 1, "exempt"); !ex.didStart {
		t.Fatal("an exempt request waited")
	}
	h.takeStarted()
	submitN(h, schema(t, cfg, "l"), 4, "L")
	if got := tags(h.takeStarted()); got != "L,L" {
		t.Fatalf("lender's arrivals started %q, want its two unlent seats at once: L,L", got)
	}
	var order []*job
	for _, j := range borrowed[:3] {
		j.finish()
		order = append(order, h.takeStarted()...)
	}
	if got := tags(order); got != "L,L,B" {
		t.Fatalf("as the borrower's requests finish: %s, want L,L,B", got)
	}
	st := h.d.Snapshot()
	if l, b := levelState(t, st, "l").ExecutingWidth, levelState(t, st, "b").ExecutingWidth; l != 4 || b != 6 {
		t.Fatalf("executing l %d b %d, want 4 and 6", l, b)
	}
}

// TestBorrowingLimitZeroStaysAtACV: a level with borrowingLimitPercent 0 runs at most its ACV
// (4) although 6 seats are free; its waiting requests hold up neither another level nor the
// exempt one.
func TestBorrowingLimitZeroStaysAtACV(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "capped", level: 100, shares: 100, queues: 8, hand: 2, limit: 50, borrow: ptr(0)},
		lvl{name: "other", level: 200, shares: 100, queues: 8, hand: 2, limit: 50, lend: ptr(100)})
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 10})
	submitN(h, schema(t, cfg, "capped"), 6, "capped")
	st := h.d.Snapshot()
	if c := levelState(t, st, "capped"); c.ExecutingWidth != 4 || c.Waiting != 2 || c.MaxConcurrency != 4 {
		t.Fatalf("capped level %+v: want 4 executing (its maxCL) and 2 waiting", c)
	}
	if o := h.submit(schema(t, cfg, "other"), 1, 1, "other"); !o.didStart {
		t.Fatal("the capped level's waiting requests held up another level")
	}
	if ex := h.submit(cfg.MastersBackstop, 1, 2, "exempt"); !ex.didStart {
		t.Fatal("an exempt request waited")
	}
}

// TestIdleLevelMayExceedSmallCap: a level of ACV ceil(10*10/110) = 1 that may not borrow
// still runs a width-2 request when nothing else of it runs (kube-apiserver's queue sets do
// the same); the next request waits until it finishes.
func TestIdleLevelMayExceedSmallCap(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "small", level: 100, shares: 10, queues: 1, limit: 10, borrow: ptr(0)})
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 10})
	s := schema(t, cfg, "small")
	wide := h.submit(s, 1, 2, "wide")
	narrow := h.submit(s, 2, 1, "narrow")
	if !wide.didStart || narrow.didStart {
		t.Fatalf("wide started %v, narrow started %v; want only the wide one", wide.didStart, narrow.didStart)
	}
	wide.finish()
	if !narrow.didStart {
		t.Fatal("the narrow request did not start after the wide one finished")
	}
}

// TestAbsentLendableLendsEveryIdleSeat: without lendablePercent a level keeps none of its ACV
// from others while idle (the proposal's dispatching), so a lone busy level runs the whole SCL;
// with lendablePercent 0 the idle level's ACV stays free.
func TestAbsentLendableLendsEveryIdleSeat(t *testing.T) {
	for _, c := range []struct {
		lend *int32
		want int
	}{{nil, 10}, {ptr(0), 6}} {
		cfg := buildConfig(t, lvl{name: "idle", level: 100, shares: 100, queues: 8, hand: 2, limit: 50, lend: c.lend},
			lvl{name: "busy", level: 200, shares: 100, queues: 8, hand: 2, limit: 50})
		h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 10})
		submitN(h, schema(t, cfg, "busy"), 12, "busy")
		if got := executing(t, h, "busy"); got != c.want {
			t.Errorf("idle level's lendablePercent %v: the busy level runs %d of 10 seats, want %d", c.lend, got, c.want)
		}
	}
}

// TestBorrowingHeadIsNotOvertaken: SCL 10, three levels of ACV ceil(10*100/400) = 3; h and y
// lend everything, l nothing (minCL 3). y borrows 6 seats; h's width-2 head then needs 2 seats
// besides l's 3 unused ones and waits. Another borrower of y waits behind it, but l's request
// runs in l's own seats. When a y request finishes, h goes first.
func TestBorrowingHeadIsNotOvertaken(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "h", level: 100, shares: 100, queues: 8, hand: 2, limit: 50, lend: ptr(100)},
		lvl{name: "l", level: 200, shares: 100, queues: 8, hand: 2, limit: 50, lend: ptr(0)},
		lvl{name: "y", level: 300, shares: 100, queues: 8, hand: 2, limit: 50, lend: ptr(100)})
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 10})
	y := submitN(h, schema(t, cfg, "y"), 6, "y")
	if got := executing(t, h, "y"); got != 6 {
		t.Fatalf("y runs %d, want 6", got)
	}
	wide := h.submit(schema(t, cfg, "h"), 1, 2, "h-wide")
	yNext := h.submit(schema(t, cfg, "y"), 99, 1, "y-next")
	if wide.didStart || yNext.didStart {
		t.Fatalf("h-wide started %v, y-next started %v; want both waiting (4 free seats, 3 reserved by l)",
			wide.didStart, yNext.didStart)
	}
	if own := h.submit(schema(t, cfg, "l"), 1, 1, "l"); !own.didStart {
		t.Fatal("l's request waited although it fits in l's own seats")
	}
	h.takeStarted()
	y[0].finish()
	if got := tags(h.takeStarted()); got != "h-wide" {
		t.Fatalf("after a y request finished: started %q, want h-wide", got)
	}
	y[1].finish()
	if got := tags(h.takeStarted()); got != "y-next" {
		t.Fatalf("after another y request finished: started %q, want y-next", got)
	}
}

// TestLimitsFollowUpdate: an Update recomputes each level's minCL and maxCL by name; requests
// in flight keep their seats above the new cap, and the level dispatches again only below it.
func TestLimitsFollowUpdate(t *testing.T) {
	cfg1 := buildConfig(t, lvl{name: "a", level: 100, shares: 100, queues: 1, limit: 50, lend: ptr(0)})
	h := newHarness(t, cfg1, dispatch.Options{ServerConcurrencyLimit: 10})
	running := submitN(h, schema(t, cfg1, "a"), 8, "a")
	if a := levelState(t, h.d.Snapshot(), "a"); a.ExecutingWidth != 8 || a.MinConcurrency != 5 || a.MaxConcurrency != 10 {
		t.Fatalf("before: %+v; want 8 executing, minCL 5 (ACV 5), maxCL 10", a)
	}
	cfg2 := buildConfig(t, lvl{name: "a", level: 100, shares: 100, queues: 1, limit: 50, lend: ptr(40), borrow: ptr(20)})
	h.d.Update(cfg2)
	if a := levelState(t, h.d.Snapshot(), "a"); a.ExecutingWidth != 8 || a.MinConcurrency != 3 || a.MaxConcurrency != 6 {
		t.Fatalf("after: %+v; want 8 still executing, minCL 5-2 = 3, maxCL 5+1 = 6", a)
	}
	waiting := h.submit(schema(t, cfg2, "a"), 1, 1, "waiting")
	for _, j := range running[:2] {
		j.finish()
	}
	if waiting.didStart {
		t.Fatal("dispatched at 6 executing, the new maxCL")
	}
	running[2].finish()
	if !waiting.didStart {
		t.Fatal("not dispatched at 5 executing, below the new maxCL 6")
	}
}

// TestFairnessTwoOverloadedLevels: SCL 20, two levels of ACV ceil(20*100/300) = 7, both
// always with waiting requests. a lends 50% and may borrow 100% (minCL 3, maxCL 14); b lends
// nothing, no borrowing limit (minCL 7, maxCL 20). b first takes every seat but a's 3; as
// requests finish, oldest first, each level always runs between its minCL and maxCL, the seats
// add up to SCL, and the split settles where b keeps its minCL and a, of higher priority,
// borrows the rest: 13 and 7.
func TestFairnessTwoOverloadedLevels(t *testing.T) {
	cfg := buildConfig(t, lvl{name: "a", level: 100, shares: 100, queues: 16, hand: 2, limit: 100, lend: ptr(50), borrow: ptr(100)},
		lvl{name: "b", level: 200, shares: 100, queues: 16, hand: 2, limit: 100})
	h := newHarness(t, cfg, dispatch.Options{ServerConcurrencyLimit: 20})
	sa, sb := schema(t, cfg, "a"), schema(t, cfg, "b")
	all := append(submitN(h, sb, 40, "b"), submitN(h, sa, 40, "a")...)
	running := h.takeStarted()
	for step := 0; step < 300; step++ {
		st := h.d.Snapshot()
		a, b := levelState(t, st, "a"), levelState(t, st, "b")
		if a.ExecutingWidth < 3 || a.ExecutingWidth > 14 || b.ExecutingWidth < 7 || b.ExecutingWidth > 20 ||
			a.ExecutingWidth+b.ExecutingWidth != 20 || a.Waiting == 0 || b.Waiting == 0 {
			t.Fatalf("step %d: a %d executing, %d waiting; b %d executing, %d waiting", step,
				a.ExecutingWidth, a.Waiting, b.ExecutingWidth, b.Waiting)
		}
		done := running[0]
		running = running[1:]
		done.finish()
		s := sa
		if done.tag == "b" {
			s = sb
		}
		all = append(all, h.submit(s, uint64(1000+step), 1, done.tag)) // the level stays overloaded
		running = append(running, h.takeStarted()...)
	}
	st := h.d.Snapshot()
	if a, b := levelState(t, st, "a").ExecutingWidth, levelState(t, st, "b").ExecutingWidth; a != 13 || b != 7 {
		t.Fatalf("settled at a %d, b %d; want 13 and 7", a, b)
	}
	h.shutdown(all)
}
