package benchmark

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Overload is a real-time scenario: one heavy flow and many light flows send GETs to one
// priority level whose capacity they exceed. Every flow is a user of its own (its own flow
// under a ByUser schema). Requests execute for Service (a sleep).
//
// The heavy flow runs HeavyWorkers closed-loop workers (a new request as soon as one ends), so
// it always wants more than the level has. Each light flow is one closed-loop worker that
// thinks for Think between requests, so it wants Service/(Service+Think) seats: less than its
// fair share, which max-min fairness must then give it in full. A rejected request is retried
// after RetryAfter.
type Overload struct {
	HeavyWorkers int
	LightFlows   int
	Service      time.Duration
	Think        time.Duration
	RetryAfter   time.Duration
	Warmup       time.Duration
	Window       time.Duration
	// LightStagger spreads the light flows' first requests evenly over this time; zero starts
	// them together. Closed-loop workers of equal cycles keep their phase, so without it the
	// light flows arrive in bursts of LightFlows requests.
	LightStagger time.Duration
	// HeavyStagger spreads the heavy workers' first requests evenly over this time. A seat
	// freed at the end of a request is taken at once by a waiting one, so the seats keep the
	// phases of their first dispatches, and those that free together once free together for
	// the rest of the run.
	HeavyStagger time.Duration
	// Jitter, between 0 and 1, draws every service and think time uniformly from
	// [(1-Jitter)·mean, (1+Jitter)·mean], from a seeded generator per worker. With fixed
	// times, seats whose ends the Go runtime's timers wake together stay together: they free
	// in clusters, and a request that arrives between clusters waits for the next one whatever
	// the scheduler does.
	Jitter float64
}

// OverloadResult is what one run of an Overload measured, over its window.
type OverloadResult struct {
	// FairnessError is the largest |measured share - max-min fair share| over all flows,
	// shares being fractions of the level's executing width integrated over the window.
	FairnessError float64
	// LightP50 and LightP99 are the median and 99th percentile of the light flows' waits
	// (arrival to execution).
	LightP50, LightP99 time.Duration
	// LightRejects counts rejected light requests.
	LightRejects int
	// Throughput is executed requests per second.
	Throughput float64
	// PeakExecuting is the largest number of requests executing at once.
	PeakExecuting int64
	// MeanExecuting is the mean executing width.
	MeanExecuting float64
	// HeavyShare and HeavyFairShare are the heavy flow's measured and max-min fair shares.
	HeavyShare, HeavyFairShare float64
}

// heavyUser and lightUser name the flows' users.
const heavyUser = "heavy"

func lightUser(i int) string { return fmt.Sprintf("light-%d", i) }

// overloadWorker is one closed-loop client. Its exec closure is made once, so the scenario
// adds no allocation per request to what the implementation does.
type overloadWorker struct {
	run      *overloadRun
	req      Prepared
	light    bool
	rng      *rand.Rand
	exec     func()
	arrived  time.Time
	admitted bool

	// Measured over the window:
	busy     time.Duration // executing time inside the window
	execs    int
	execSum  time.Duration // total exec duration of the requests counted in execs
	thinkSum time.Duration
	thinks   int
	rejects  int
	waits    []time.Duration
}

// jittered returns mean, or a draw around it when the scenario has Jitter.
func (w *overloadWorker) jittered(mean time.Duration) time.Duration {
	if w.run.o.Jitter == 0 {
		return mean
	}
	return time.Duration(float64(mean) * (1 + w.run.o.Jitter*(2*w.rng.Float64()-1)))
}

// overloadRun is the shared state of one run.
type overloadRun struct {
	o           Overload
	windowStart time.Time
	windowEnd   time.Time
	executing   atomic.Int64
	peak        atomic.Int64
}

func (r *overloadRun) inWindow(t time.Time) bool {
	return !t.Before(r.windowStart) && t.Before(r.windowEnd)
}

// overlap returns how much of [s, e) lies inside the window.
func (r *overloadRun) overlap(s, e time.Time) time.Duration {
	if s.Before(r.windowStart) {
		s = r.windowStart
	}
	if e.After(r.windowEnd) {
		e = r.windowEnd
	}
	if e.Before(s) {
		return 0
	}
	return e.Sub(s)
}

func (w *overloadWorker) execute() {
	start := time.Now()
	w.admitted = true
	n := w.run.executing.Add(1)
	if w.run.inWindow(start) {
		for p := w.run.peak.Load(); n > p && !w.run.peak.CompareAndSwap(p, n); p = w.run.peak.Load() {
		}
		if w.light {
			w.waits = append(w.waits, start.Sub(w.arrived))
		}
	}
	time.Sleep(w.jittered(w.run.o.Service))
	end := time.Now()
	w.run.executing.Add(-1)
	if d := w.run.overlap(start, end); d > 0 {
		w.busy += d
		w.execs++
		w.execSum += end.Sub(start)
	}
}

func (w *overloadWorker) loop(ctx context.Context) {
	for {
		w.arrived = time.Now()
		if !w.arrived.Before(w.run.windowEnd) {
			return
		}
		w.admitted = false
		w.req.Handle(ctx, w.exec)
		if !w.admitted {
			if w.run.inWindow(w.arrived) {
				w.rejects++
			}
			time.Sleep(w.run.o.RetryAfter)
			continue
		}
		if w.light {
			s := time.Now()
			time.Sleep(w.jittered(w.run.o.Think))
			if w.run.inWindow(s) {
				w.thinkSum += time.Since(s)
				w.thinks++
			}
		}
	}
}

// Run runs the scenario against impl and measures it.
func (o Overload) Run(impl Impl) OverloadResult {
	now := time.Now()
	run := &overloadRun{o: o, windowStart: now.Add(o.Warmup), windowEnd: now.Add(o.Warmup + o.Window)}
	groups := []string{AuthenticatedGroup}
	seed := uint64(0)
	newWorker := func(user string, light bool) *overloadWorker {
		seed++
		w := &overloadWorker{run: run, light: light, rng: rand.New(rand.NewPCG(seed, 0x0f)),
			req: impl.Prepare(Request{User: user, Groups: groups, Verb: "get", Resource: "pods", Namespace: "ns"})}
		w.exec = w.execute
		return w
	}
	heavy := make([]*overloadWorker, o.HeavyWorkers)
	for i := range heavy {
		heavy[i] = newWorker(heavyUser, false)
	}
	light := make([]*overloadWorker, o.LightFlows)
	for i := range light {
		light[i] = newWorker(lightUser(i), true)
	}
	var wg sync.WaitGroup
	for i, w := range heavy {
		delay := o.HeavyStagger * time.Duration(i) / time.Duration(len(heavy))
		wg.Go(func() {
			time.Sleep(delay)
			w.loop(context.Background())
		})
	}
	for i, w := range light {
		delay := o.LightStagger * time.Duration(i) / time.Duration(len(light))
		wg.Go(func() {
			time.Sleep(delay)
			w.loop(context.Background())
		})
	}
	wg.Wait()
	return run.result(heavy, light)
}

func (r *overloadRun) result(heavy, light []*overloadWorker) OverloadResult {
	var res OverloadResult
	busy := make([]float64, 0, 1+len(light)) // per flow, seconds; heavy first
	demand := make([]float64, 0, 1+len(light))
	var heavyBusy time.Duration
	execs := 0
	for _, w := range heavy {
		heavyBusy += w.busy
		execs += w.execs
	}
	busy = append(busy, heavyBusy.Seconds())
	demand = append(demand, float64(len(heavy)))
	var waits []time.Duration
	for _, w := range light {
		busy = append(busy, w.busy.Seconds())
		demand = append(demand, lightDemand(w, r.o))
		execs += w.execs
		res.LightRejects += w.rejects
		waits = append(waits, w.waits...)
	}
	var total float64
	for _, b := range busy {
		total += b
	}
	window := r.windowEnd.Sub(r.windowStart).Seconds()
	res.MeanExecuting = total / window
	res.Throughput = float64(execs) / window
	res.PeakExecuting = r.peak.Load()
	res.LightP50, res.LightP99 = Percentile(waits, 0.5), Percentile(waits, 0.99)
	fair := MaxMinFair(demand, res.MeanExecuting)
	if total > 0 {
		res.HeavyShare, res.HeavyFairShare = busy[0]/total, fair[0]/res.MeanExecuting
	}
	for i := range busy {
		if total == 0 {
			res.FairnessError = 1
			break
		}
		res.FairnessError = max(res.FairnessError, math.Abs(busy[i]/total-fair[i]/res.MeanExecuting))
	}
	return res
}

// lightDemand is the seats a light flow would occupy if it never waited: its mean service
// time over its mean cycle of service and think time, as measured (sleeps overshoot a little).
func lightDemand(w *overloadWorker, o Overload) float64 {
	service, think := o.Service.Seconds(), o.Think.Seconds()
	if w.execs > 0 {
		service = (w.execSum / time.Duration(w.execs)).Seconds()
	}
	if w.thinks > 0 {
		think = (w.thinkSum / time.Duration(w.thinks)).Seconds()
	}
	return service / (service + think)
}

// MaxMinFair divides capacity among flows with the given demands by max-min fairness (water
// filling): no flow gets more than its demand, and capacity a flow does not want is shared
// equally by the others. The result is in the order of demands.
func MaxMinFair(demands []float64, capacity float64) []float64 {
	alloc := make([]float64, len(demands))
	order := make([]int, len(demands))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(demands[a], demands[b]) })
	left := capacity
	for n, i := range order {
		share := left / float64(len(order)-n)
		alloc[i] = min(demands[i], share)
		left -= alloc[i]
	}
	return alloc
}

// Percentile returns the p-quantile (0 < p <= 1) of ds by the nearest-rank method; 0 when ds
// is empty. It sorts ds.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	rank := int(math.Ceil(p*float64(len(ds)))) - 1
	return ds[max(rank, 0)]
}
