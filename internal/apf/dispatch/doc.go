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
// ACV(l) = ceil(SCL * ACS(l) / (100 + sum ACS)) (effective.Config.AssuredConcurrency).
//
// # Admission
//
// Handle reads the clock once, then, under the dispatcher's lock: rejects every request that
// has waited WaitLimit or longer (oldest first, from one arrival-ordered list of all waiting
// requests), then admits the new request. If nothing waits at any level and its width fits in
// the free seats, the request is dispatched at once (the fast path); otherwise it joins the
// shortest queue of its hand at its level, or is rejected when that queue is full, and waits.
//
// The fast path is not an approximation. Had the request been queued, it would be the only
// waiting request, so the two-stage choice below would pick its level and its queue, and its
// width fits: the slow path dispatches the same request at once too. Its queue is the one the
// slow path picks: fairqueue's Start chooses it by the rule Enqueue uses, the first queue of
// the hand with the fewest waiting plus executing requests (with nothing waiting, the fewest
// executing). When the level is idle, or the first card's queue is empty, that is the first
// card and no hand is dealt (see fairqueue). The virtual-time bookkeeping (R advanced, the
// queue's start time set and charged G) is done exactly as for a queued request, so later
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
// use is below SCL, the dispatcher chooses a level: the first, highest priority first, with a
// waiting request whose executing width is below its ACV; else the highest-priority level with
// a waiting request. Fair queuing picks that level's next request; if its width fits in the
// free seats it is dispatched and the choice repeats, otherwise dispatching waits for the next
// change (a wide head is never overtaken, so it cannot starve).
//
// # Waiting, timeouts and cancellation
//
// A waiting request holds a pooled waiter whose one-slot channel receives exactly one
// decision: dispatched or timed out. Wait-limit expiry needs no timer per request: each
// admission and each finish rejects the expired requests at the front of the arrival-ordered
// list, and one shared timer, set for the oldest waiter's deadline, does the same for a quiet
// server. The timer is stopped when no request waits any more and armed again by the next
// one to wait; while requests wait it is not re-armed each time the oldest leaves, but re-arms
// itself, when it fires, for the new oldest. A request whose context is cancelled while it waits leaves its queue at once and
// returns RejectedCancelled; it held no seat, so it frees none. A request already dispatched
// when its cancellation is noticed runs exec (which sees the cancelled context).
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
// The uncontended path takes the lock twice (admit, finish), reads the clock twice, updates a
// few counters and the flow's metric children (resolved once per configuration, found by the
// schema's address in a table built with the configuration; holding their series is a plain
// addition under the lock), and allocates nothing; waiting
// requests reuse pooled waiters. Nothing scans all queues or all waiting requests. The
// dispatches and finishes are counted in the metrics under the lock, with plain additions
// (metrics.Flow.Guard): an atomic addition costs about 7 ns here, and there were three.
//
// A system clock read costs about 30 ns on the virtual machines the benchmarks ran on (Go
// reads it through the kernel's vDSO on the system stack): twice per request, more than the
// rest of the uncontended path. Without a Clock in its Options the dispatcher therefore reads
// the processor's time-stamp counter (package tsc, about 10 ns) wherever the kernel itself
// uses it as its clocksource, and the system clock elsewhere; both are exact.
package dispatch
