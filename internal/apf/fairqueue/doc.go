// Package fairqueue holds the queues of one priority level and decides, by fair queuing, which
// waiting request the level dispatches next. It implements the proposal's "Queuing" and "Fair
// Queuing for Server Requests" sections for one level; choosing the level and counting seats
// against the server concurrency limit is the dispatcher's job (internal/apf/dispatch).
//
// # Queues
//
// A QueueSet has QueuesPerWidth queues for each request width (1 for read-only, 2 for mutating
// requests), so one queue holds requests of one width only. An arriving request is dealt its
// flow's hand of queues by shuffle sharding (internal/apf/shufflesharding) and joins the
// shortest queue of the hand, the first dealt among equals. As in the proposal, a request is in
// its queue until it finishes, so a queue's length is its waiting plus its executing requests:
// a flow avoids the queues whose requests still run, even when nothing waits. A request that
// finds the chosen queue holding QueueLengthLimit waiting requests is rejected: the youngest
// request is rejected, never one already waiting.
//
// The first card of the hand is I[0] = V mod QueuesPerWidth. When that queue is empty (nothing
// waits or executes in it), it is the first shortest queue whatever the other cards hold, so
// the set takes it after one division instead of dealing the whole hand; the result, and so
// the virtual-time accounting, is the same as dealing. A set where nothing waits or executes
// at all (an idle set) always takes that shortcut. Otherwise the set remembers the hands of
// recent flows (hands.go): dealing six cards costs about 100 ns, and flows send request after
// request.
//
// # Virtual time
//
// R(t) counts rounds, a round giving one nanosecond of service to every non-empty queue (a
// queue is non-empty while it holds waiting or executing requests; queues of width 2 count
// twice). The proposal's rate of R is min(sum of reqs(q), C) / NEQ: the width the server
// executes, spread over the non-empty queues. With one limit shared by several levels, the
// width the server executes for this level is exactly the width of this set's executing
// requests, so R advances at executingWidth / NEQ. (Using the whole server limit C while other
// levels hold seats would run R ahead of the service the set really gives, and a queue that
// becomes active, taking R as its virtual start, would fall behind every backlogged queue by
// an amount that grows without bound.) R is advanced lazily, when an event changes the rate;
// nothing is scanned.
//
// As the proposal prescribes, a queue keeps a virtual start time S instead of per-request
// finish times: a request arriving at a queue with nothing waiting or executing sets S = R(now);
// the J-th waiting request (J = 1 at the head) finishes at S + J*G, G being the service-time
// guess; dispatching the head adds G to S; a request finishing after actual service time A
// subtracts G - A. Removing a waiting request (timeout or cancellation) shifts the finish times
// of the requests behind it without touching S. While the whole set is idle every S is
// ignored, so R restarts at zero, which keeps the floating-point values small.
//
// The next request dispatched is the head of the waiting queue with the least virtual finish
// time S + G. The set keeps an index of the queues with waiting requests, a binary heap ordered
// by S (ties by queue index), updated in O(log n) at each event, so dispatching never scans the
// queues.
//
// # Service-time guess
//
// G defaults to the proposal's one minute, the request timeout: an upper bound of the service
// time, so a queue is never charged less than its requests in flight may cost, and the
// correction at finish only gives service back. Among backlogged queues this dispatches first
// the queue with the fewest requests in flight, then the one that received the least service,
// so seat-time is shared evenly whatever the requests' durations. Any G gives the same
// long-run shares, but a small one (upstream Kubernetes uses 3 ms) lets the queues of a flow
// of long requests take the free seats while those requests still look cheap: in
// TestDefaultGuessProtectsLightFlows (a heavy flow of 1 s requests and 20 light flows) the
// light flows' p99 wait is 0.9 s with G = 1 min and 2.9 s with G = 3 ms. (Choosing queues by
// waiting requests only, the heavy flow's running requests did not keep light flows out of
// their queues: 1.5 s and 3.6 s.)
//
// # Idle sets
//
// Most priority levels are idle most of the time. A request that Start admits to an idle set
// is not booked into a queue unless another operation on the set comes before its Finish; if
// none does, the set returns to idle without any queue bookkeeping (see deferred.go and
// TestDeferredStartIsInvisible, which checks that no decision can tell).
//
// A QueueSet is not safe for concurrent use: its owner serializes every call. Times are given
// as durations since an epoch of the owner's choosing, read from a monotonic clock.
package fairqueue
