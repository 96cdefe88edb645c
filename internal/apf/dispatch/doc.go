// Package dispatch is the flow-control server of one API server: it admits each classified
// request, queues it at its priority level when it must wait, dispatches queued requests as
// seats free up, and rejects what the configuration says to reject. It implements the
// proposal's "Resource Limits and Request Widths", "Queuing" and "Dispatching" sections; the
// queues of one level and fair queuing among them are internal/apf/fairqueue.
//
// # Seats and levels
//
// The server concurrency limit SCL counts width units: a read-only request takes 1, a mutating
// request 2. Level 0 is exempt: its requests run at once, are never queued and are not counted
// against SCL. Every other level has an assured concurrency value
// ACV(l) = ceil(SCL * ACS(l) / (100 + sum ACS)) (effective.Config.AssuredConcurrency), its
// nominal concurrency limit, and the bounds of borrowing below.
//
// # Borrowing
//
// Each non-exempt level has kube-apiserver's bounds: minCL = ACV - round(ACV*lendablePercent/100),
// the seats it never lends (0 when lendablePercent is absent: as in the proposal, every idle
// seat goes to whichever level waits; the native projection writes 0 instead), and maxCL = ACV + round(ACV*borrowingLimitPercent/100), or SCL
// without a borrowing limit (borrow.go; rounding half away from zero, as math.Round). A request
// of width w at level l may be dispatched when w seats are free and
//   - executing(l)+w <= minCL(l): it runs in its level's own seats; or
//   - executing(l)+w <= maxCL(l) (or nothing of l executes: one request may exceed a small
//     maxCL, as kube-apiserver's queue sets allow) and executing+w plus every other level's
//     reserve, max(0, minCL-executing), is at most SCL: it leaves every other level's unused
//     own seats free.
//
// The sum of the reserves and the sum of minCL are running totals, updated on every dispatch,
// finish and Update, so no check scans the levels. While the reserves are honoured,
// executing + sum of reserves <= SCL holds after every dispatch, so a level below its minCL
// always finds its own seats free. The limits can be over-committed: by an Update (requests in
// flight keep their seats; the levels wait until they are back within their limits), or when
// the minCL sum exceeds SCL (a tiny SCL with many levels, as ceil rounds every ACV up); then a
// level's own seats are free only when some are.
//
// kube-apiserver recomputes each level's current limit every 10 s from its smoothed seat demand,
// within [minCL, maxCL]; here borrowing is decided at every dispatch within the same bounds, so
// idle seats are lent at once and returned as soon as the borrowed requests finish. A removed
// level keeps its limits until its queues drain (kube-apiserver's quiescing levels), then
// reserves nothing.
//
// # Admission
//
// Handle reads the clock once, then, under the dispatcher's lock: rejects every request that
// has waited WaitLimit or longer (oldest first, from one arrival-ordered list of all waiting
// requests), then admits the new request. If nothing waits at any level and its level's limits
// let it take free seats (see Borrowing: a few integer comparisons), the request is dispatched
// at once (the fast path); otherwise it joins the shortest queue of its hand at its level, or
// is rejected when that queue is full, and waits.
//
// The fast path is not an approximation. Had the request been queued, it would be the only
// waiting request, so the two-stage choice below would pick its level and its queue, and the
// limits let it run: the slow path dispatches the same request at once too. Its queue is the
// one the slow path picks: fairqueue's Start chooses it by the rule Enqueue uses, the first
// queue of the hand with the fewest waiting plus executing requests (with nothing waiting, the
// fewest executing). When the level is idle, or the first card's queue is empty, that is the
// first card and no hand is dealt (see fairqueue). The virtual-time bookkeeping (R advanced,
// the queue's start time set and charged G) is done exactly as for a queued request, so later
// fair-queuing decisions are unaffected. The fast path takes no pooled state, makes no channel
// and allocates nothing.
//
// When nothing waits at the request's level but something waits at another (a wide head that
// does not fit, say), dispatching the arrival at once could overtake what the two-stage choice
// below must consider first, so it takes the queued path; it deals a hand only if its first
// card's queue executes requests, and, when the choice picks it, is dispatched before it ever
// blocks.
//
// # Dispatching
//
// Whenever a request finishes, leaves its queue or the configuration changes, and the width in
// use is below SCL, the dispatcher chooses a level. Only levels whose head (the request fair
// queuing picks next) the limits allow are considered; a level held back by its own maxCL, or
// by seats other levels keep even when none of them borrows, is skipped and holds nobody up.
// Among the others: the first, highest priority first, whose executing width is below its ACV;
// else the highest-priority one. If the chosen head fits in the free seats it is dispatched and
// the choice repeats; otherwise it waits and no later level in that order may borrow ahead of
// it (a wide head is never overtaken by a borrower, so it cannot starve). A head that fits in
// its own level's minCL and the free seats is dispatched even then: those seats are not the
// waiting head's to take.
//
// # Finishing
//
// A finish releases the request's seats, corrects its queue's virtual time by the actual
// service time and dispatches what now fits, under the lock. A finish that finds the lock
// taken does not wait for it: it pushes a copy of its seat onto a lock-free stack and returns,
// and the goroutine holding the lock applies it before releasing the lock (handover.go). So a
// request that has run never waits again, and under contention one acquisition serves several
// finishes. Whoever takes the lock first applies what was handed over, so every decision sees
// every released seat; a handed-over finish is applied, at the latest, when the holder that
// made it hand over releases the lock.
//
// # Waiting, timeouts and cancellation
//
// A waiting request holds a pooled waiter whose one-slot channel receives exactly one
// decision: dispatched or timed out. Wait-limit expiry needs no timer per request: each
// admission and each finish rejects the expired requests at the front of the arrival-ordered
// list, and one shared timer, set for the oldest waiter's deadline, does the same for a quiet
// server. The timer is stopped when no request waits any more and armed again by the next
// one to wait; while requests wait it is not re-armed each time the oldest leaves, but re-arms
// itself, when it fires, for the new oldest. A request whose context is cancelled while it
// waits leaves its queue at once and returns RejectedCancelled; it held no seat, so it frees
// none. A request already dispatched when its cancellation is noticed runs exec (which sees the
// cancelled context).
//
// # Configuration changes
//
// Update swaps the configuration atomically while requests are in flight. A level keeps its
// state by name: its executing width, its ACV (recomputed) and its queues, unless its queue
// count or hand size changed; then it gets new queues and the old ones drain (dispatched
// before the new ones, as they hold the older requests). A level removed from the
// configuration keeps its place in the dispatch order until its queues drain. Executing
// requests finish against the level and queue that dispatched them, so no seat leaks. Requests
// classified against an older configuration are mapped by RequestPriority name onto the
// current one, or onto the lowest level if their level is gone.
//
// The metric series of a (level, FlowSchema) pair is deleted when no configuration names it
// and no request of it waits or executes: a configuration holds the series of its schemas
// until its successor is in force, and each request holds its flow's series from admission to
// its last record (see series.go). So a removed level's series leave once it has drained, a
// removed schema's once its last request has finished or been rejected, and a request
// classified against an older configuration, counted under its own schema's name, keeps that
// series only while it is in flight. The cache of such stale flows keeps no flow whose series
// was deleted.
//
// # Cost
//
// The uncontended path takes the lock twice (admit, finish; a finish under contention hands
// over instead), reads the coarse clock twice,
// updates a few counters and the flow's metric children (resolved once per configuration, found
// by the schema's address in a table built with the configuration; holding their series is a
// plain addition under the lock), and allocates nothing; waiting requests reuse pooled
// waiters. Nothing scans all queues or all waiting requests. The
// dispatches and finishes are counted in the metrics under the lock, with plain additions
// (metrics.Flow.Guard): an atomic addition costs about 7 ns here, and there were three.
//
// # Clocks
//
// A system clock read costs 30–55 ns where the kernel's clocksource is kvm-clock (most cloud
// virtual machines; Go reads it through the vDSO on the system stack), and about 10 ns from the
// processor's time-stamp counter where the kernel trusts that (package tsc). Two exact reads
// per request would cost more than the rest of the uncontended path. So while no request waits
// anywhere, admissions and finishes read a coarse clock instead (coarse.go): one atomic load of
// a time that a goroutine publishes every millisecond while requests arrive, and that stops a
// second after the last one. No decision made then depends on the time: with nothing
// waiting, the fast path dispatches regardless of it. The time goes only into the metrics'
// service times, measured to about a millisecond, and into the virtual-time bookkeeping of
// levels that have requests executing (an idle level's is deferred, see fairqueue), which
// matters only once requests queue and is then off by at most a tick per request that ran in
// between. Once a request waits, every reading is exact (the time-stamp counter
// where trusted, else the system clock's monotonic reading), so fair queuing and wait limits
// are as exact as before; a request admitted on the coarse clock and finished on the exact one
// is charged at most a tick more service. The uncontended path therefore reads no clock whose
// cost depends on the clocksource. A Clock in the Options (a fake in tests) is read exactly, every time.

package dispatch
