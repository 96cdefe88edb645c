// Package benchmark measures the request path of this project's flow-control engine
// (internal/apf) side by side with upstream Kubernetes' API Priority and Fairness
// (k8s.io/apiserver/pkg/util/flowcontrol) and a plain semaphore, the old max-in-flight limit
// that is the floor of what any admission control can cost.
//
// It is its own Go module so that k8s.io/apiserver stays out of the product's dependencies.
//
// All three implementations sit behind Impl and are fed the same Config: five limited
// priority levels of 10 shares each (four with 128 queues, hand size 6 and queue length
// limit 100; one with a single queue), N FlowSchemas of which N-1 match one user each and one
// matches group system:authenticated at the lowest precedence, flows distinguished by user.
// Requests are GETs of pods by user tenant-k in namespace ns-k; cycling k over 1,000 or
// 100,000 values makes that many distinct flows.
//
// Benchmarks (names carry impl=, schemas= and flows= so cmd/benchtable can build one table):
//   - BenchmarkUncontended: one goroutine admits, runs (a no-op) and finishes requests.
//   - BenchmarkContended: 256 goroutines do the same with a server concurrency limit of 600;
//     reports req/s.
//   - BenchmarkFairness and BenchmarkLightWait: one heavy flow (100 or 400 closed-loop workers)
//     and 50 light flows (one worker each, 60 ms think time) overload one level of 20 seats
//     with requests that execute for 10 ms, in real time, for 3 s after a 0.5 s warm-up; they
//     report the largest deviation of a flow's share of executing width from its max-min fair
//     share (fairness-err) and the light flows' median and 99th-percentile queue wait
//     (light-p50-ms, light-p99-ms). Their ns/op, B/op and allocs/op cover the whole scenario.
//     See overload.go.
//   - BenchmarkBorrowing: two levels of nominal 20 seats each (SCL 40, BorrowingConfig); one
//     is overloaded by 200 closed-loop workers, the other has 20 light flows wanting about 3
//     seats and lends half of its seats. It reports the mean seats each level executes, the
//     borrower's share of SCL and the light flows' waits, from 0.5 s and from 12 s after the
//     engine starts (upstream adjusts its levels' limits every 10 s; ours at every dispatch).
//     Ours and upstream only: the semaphore has no levels.
//
// Run with `make bench` (BENCH_COUNT=n for medians of n runs), which pipes the output through
// cmd/benchtable; one run, measuring every case once, takes about a minute on two cores, and
// the runs follow one another so that each case's samples are spread over the whole session.
package benchmark
