package sim

import (
	"container/heap"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch/dispatchtest"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/autopilot"
)

// Epoch is the virtual time at which every run starts.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// runner is one run of a scenario under one policy.
type runner struct {
	sc     *Scenario
	policy *policy
	clock  *dispatchtest.FakeClock
	eng    *apf.Engine
	reqs   *requests
	// base is the configuration with the pool's applied shares, the levels' nominal limits;
	// borrow the current limits the engine runs at (borrowing.go).
	base   *effective.Config
	borrow *borrowing

	names   []string
	sources []*source
	attrs   [][]request.Attributes // by level, by flow
	applied map[string]int32       // the pool's shares in force

	finishes finishHeap
	fifo     []*job // every arrival, in order: the oldest waiting one's wait limit comes first
	nextID   uint64
	last     time.Duration // virtual time of the last event
	seats    []int         // per level: executing plus queued requests now
	win      *window
	once     *window // [0, OnceAfter), for the recommend-once policy
	total    *window // the whole run

	res *Result
}

// Run simulates sc under the policy p and returns its measurements.
func Run(sc *Scenario, p Policy, cfg autopilot.Config) (*Result, error) {
	r, err := newRunner(sc, p, cfg)
	if err != nil {
		return nil, err
	}
	return r.run()
}

func newRunner(sc *Scenario, p Policy, cfg autopilot.Config) (*runner, error) {
	if sc.Window <= 0 || sc.Duration%sc.Window != 0 || sc.OnceAfter%sc.Window != 0 {
		return nil, fmt.Errorf("scenario %s: duration %v and recommend-once time %v must be multiples of the window %v",
			sc.Name, sc.Duration, sc.OnceAfter, sc.Window)
	}
	if p.lends() {
		sc = lending(sc)
	}
	r := &runner{sc: sc, clock: dispatchtest.NewFakeClock(Epoch), applied: map[string]int32{},
		borrow: &borrowing{scl: sc.ServerConcurrencyLimit}}
	ecfg, err := buildConfig(sc.Levels, nil)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	for i := range sc.Levels {
		r.names = append(r.names, sc.Levels[i].Name)
	}
	r.base = ecfg
	r.borrow.configure(ecfg, r.names)
	r.eng = apf.NewEngine(r.borrow.limited(ecfg), dispatch.Options{ServerConcurrencyLimit: sc.ServerConcurrencyLimit,
		WaitLimit: sc.WaitLimit, Clock: r.clock})
	r.reqs = &requests{eng: r.eng, now: func() time.Duration { return r.clock.Now().Sub(Epoch) }}
	n := len(sc.Levels)
	r.seats = make([]int, n)
	r.win, r.once, r.total = newWindow(0, n), newWindow(0, n), newWindow(0, n)
	r.res = &Result{Scenario: sc.Name, Policy: p, PoolSumKept: true, OtherSeatsKept: true}
	for i := range sc.Levels {
		l := &sc.Levels[i]
		r.sources = append(r.sources, newSource(sc.Seed, i, l, sc.Duration))
		r.attrs = append(r.attrs, flowAttributes(l))
		if l.Autopilot != nil {
			r.applied[l.Name] = l.Shares
		}
	}
	r.policy = &policy{kind: p, cfg: cfg, loop: newLoop(p, cfg)}
	r.res.initialSeats = r.nominalSeats()
	return r, nil
}

// flowAttributes returns the attributes of a request of each of the level's flows: a get of a
// pod in the level's namespace by one of its users (one seat, matched by the level's FlowSchema).
func flowAttributes(l *LevelSpec) []request.Attributes {
	out := make([]request.Attributes, max(l.Flows, 1))
	for f := range out {
		out[f] = request.Attributes{User: l.Name + "-user-" + strconv.Itoa(f), Verb: "get", Resource: "pods",
			Namespace: l.Name, Name: "p", ResourceRequest: true}
	}
	return out
}

// event kinds, in the order they are processed when simultaneous.
const (
	evWindow = iota
	evBorrow
	evDeadline
	evFinish
	evArrival
)

func (r *runner) run() (*Result, error) {
	nextWindow, nextBorrow := r.sc.Window, borrowPeriod
	for {
		at, kind, src := r.nextEvent(nextWindow, nextBorrow)
		if at > r.sc.Duration {
			break
		}
		r.advance(at)
		var err error
		switch kind {
		case evWindow:
			err = r.endWindow(at)
			nextWindow += r.sc.Window
		case evBorrow:
			err = r.adjustBorrowing()
			nextBorrow += borrowPeriod
		case evDeadline:
			err = r.settleAndCollect()
		case evFinish:
			j := heap.Pop(&r.finishes).(*job)
			r.reqs.finish(j)
			err = r.settleAndCollect()
		case evArrival:
			err = r.arrive(src, at)
		}
		if err != nil {
			return nil, fmt.Errorf("scenario %s, policy %s, at %v: %w", r.sc.Name, r.res.Policy, at, err)
		}
	}
	return r.finishRun()
}

// nextEvent returns the time and kind of the next event (and the arriving level's source).
func (r *runner) nextEvent(nextWindow, nextBorrow time.Duration) (time.Duration, int, *source) {
	at, kind := nextWindow, evWindow
	if nextBorrow < at {
		at, kind = nextBorrow, evBorrow
	}
	if d, ok := r.nextDeadline(); ok && d < at {
		at, kind = d, evDeadline
	}
	if len(r.finishes) > 0 {
		if f := r.finishes[0].startAt + r.finishes[0].service; f < at {
			at, kind = f, evFinish
		}
	}
	var src *source
	for _, s := range r.sources {
		if s.next < at || (s.next == at && kind == evArrival && s.level < src.level) {
			at, kind, src = s.next, evArrival, s
		}
	}
	return at, kind, src
}

// nextDeadline returns when the oldest waiting request reaches its wait limit.
func (r *runner) nextDeadline() (time.Duration, bool) {
	for len(r.fifo) > 0 {
		j := r.fifo[0]
		if !j.started && !j.ended {
			return j.arrival + r.sc.WaitLimit, true
		}
		r.fifo[0] = nil
		r.fifo = r.fifo[1:]
	}
	return 0, false
}

// advance integrates the seat demand up to at and moves the clock there (firing the engine's
// wait-limit timer if due).
func (r *runner) advance(at time.Duration) {
	d := at - r.last
	r.win.integrate(d, r.seats)
	r.total.integrate(d, r.seats)
	r.borrow.integrate(d, r.seats)
	if r.last < r.sc.OnceAfter {
		r.once.integrate(min(at, r.sc.OnceAfter)-r.last, r.seats)
	}
	r.last = at
	r.clock.SetTime(Epoch.Add(at))
}

func (r *runner) arrive(s *source, at time.Duration) error {
	r.nextID++
	j := &job{id: r.nextID, level: s.level, arrival: at, service: s.service, attrs: &r.attrs[s.level][s.nextFlow()]}
	s.advance(at)
	r.seats[j.level]++
	r.fifo = append(r.fifo, j)
	r.reqs.submit(j)
	return r.settleAndCollect()
}

// settleAndCollect waits for the engine to account for every request, then records what
// started and what ended, in request order.
func (r *runner) settleAndCollect() error {
	if err := r.reqs.settle(); err != nil {
		return err
	}
	started, ended := r.reqs.take()
	slices.SortFunc(started, func(a, b *job) int { return cmpID(a, b) })
	slices.SortFunc(ended, func(a, b *job) int { return cmpID(a, b) })
	for _, j := range started {
		wait := j.startAt - j.arrival
		r.record(j.level, func(a *levelAcc) { a.dispatched++; a.waits = append(a.waits, wait) })
		heap.Push(&r.finishes, j)
	}
	for _, j := range ended {
		r.seats[j.level]--
		if j.started {
			continue
		}
		if j.outcome == dispatch.Executed {
			return fmt.Errorf("request %d ended executed without starting", j.id)
		}
		wait := j.endAt - j.arrival
		r.record(j.level, func(a *levelAcc) { a.rejected++; a.waits = append(a.waits, wait) })
	}
	r.win.observePeak(r.seats)
	r.total.observePeak(r.seats)
	if r.last < r.sc.OnceAfter {
		r.once.observePeak(r.seats)
	}
	return nil
}

// record applies f to the level's accumulators of every window in progress.
func (r *runner) record(level int, f func(*levelAcc)) {
	f(&r.win.levels[level])
	f(&r.total.levels[level])
	if r.last < r.sc.OnceAfter {
		f(&r.once.levels[level])
	}
}

func cmpID(a, b *job) int {
	switch {
	case a.id < b.id:
		return -1
	case a.id > b.id:
		return 1
	}
	return 0
}

// nominalSeats returns each level's nominal seats (ACV) in the configuration now.
func (r *runner) nominalSeats() []int {
	out := make([]int, len(r.names))
	for i, name := range r.names {
		for _, p := range r.base.Priorities {
			if p.Name == name {
				out[i] = r.base.AssuredConcurrency(p, r.sc.ServerConcurrencyLimit)
			}
		}
	}
	return out
}

// adjustBorrowing is kube-apiserver's periodic adjustment of the current limits.
func (r *runner) adjustBorrowing() error {
	if err := r.settleAndCollect(); err != nil {
		return err
	}
	r.borrow.adjust(r.seats)
	r.eng.Update(r.borrow.limited(r.base))
	return r.settleAndCollect()
}

// poolLevels returns the pool's levels as configured now.
func (r *runner) poolLevels() []autopilot.Level {
	var out []autopilot.Level
	for i := range r.sc.Levels {
		l := &r.sc.Levels[i]
		if l.Autopilot == nil {
			continue
		}
		lvl := autopilot.Level{Name: l.Name, Object: l.Name, Shares: r.applied[l.Name], ConfiguredShares: l.Shares,
			BorrowingLimitPercent: l.BorrowingLimitPercent, Bounds: *l.Autopilot}
		if l.LendablePercent != nil {
			lvl.LendablePercent = *l.LendablePercent
		}
		out = append(out, lvl)
	}
	return out
}

// endWindow closes the window ending at at: checks the invariants, lets the policy decide and
// applies its shares.
func (r *runner) endWindow(at time.Duration) error {
	if err := r.settleAndCollect(); err != nil {
		return err
	}
	nominal := r.nominalSeats()
	r.checkInvariants(nominal)
	w := r.win.toAutopilot(Epoch, at, r.names, nominal, r.policy.cfg.Quantile)
	var once *autopilot.Window
	if at == r.sc.OnceAfter {
		ow := r.once.toAutopilot(Epoch, at, r.names, nominal, r.policy.cfg.Quantile)
		once = &ow
	}
	r.win = newWindow(at, len(r.names))
	next, rolledBack := r.policy.decide(Epoch.Add(at), r.poolLevels(), w, once)
	if next == nil || sameShares(next, r.applied) {
		return nil
	}
	return r.apply(next, rolledBack)
}

// checkInvariants records whether the pool's shares in the engine's configuration still sum
// to its configured ones and every level outside the pool keeps its initial nominal seats.
func (r *runner) checkInvariants(nominal []int) {
	inForce := map[string]int32{}
	for _, p := range r.base.Priorities {
		inForce[p.Name] = p.Shares
	}
	var applied, configured int32
	for i := range r.sc.Levels {
		l := &r.sc.Levels[i]
		if l.Autopilot != nil {
			applied += inForce[l.Name]
			configured += l.Shares
		} else if nominal[i] != r.res.initialSeats[i] {
			r.res.OtherSeatsKept = false
		}
	}
	if applied != configured {
		r.res.PoolSumKept = false
	}
}

func sameShares(a, b map[string]int32) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// apply puts new pool shares in force: a new effective configuration for the engine.
func (r *runner) apply(next map[string]int32, rolledBack bool) error {
	for name, s := range next {
		if _, ok := r.applied[name]; !ok {
			return fmt.Errorf("policy applied shares to %s, not a pool level", name)
		}
		if d := s - r.applied[name]; d > 0 {
			r.res.SharesMoved += int(d)
		}
		r.applied[name] = s
	}
	cfg, err := buildConfig(r.sc.Levels, r.applied)
	if err != nil {
		return err
	}
	r.base = cfg
	r.borrow.configure(cfg, r.names)
	r.borrow.allocate()
	r.eng.Update(r.borrow.limited(cfg))
	r.res.Steps++
	if rolledBack {
		r.res.Rollbacks++
	}
	return r.settleAndCollect()
}

// finishRun lets the requests still in flight end (each request that arrived during the run
// is counted, whatever the time it ends) and summarises the run.
func (r *runner) finishRun() (*Result, error) {
	nominal := r.nominalSeats()
	r.checkInvariants(nominal)
	for {
		at, kind := time.Duration(-1), evFinish
		if len(r.finishes) > 0 {
			at = r.finishes[0].startAt + r.finishes[0].service
		}
		if d, ok := r.nextDeadline(); ok && (at < 0 || d <= at) {
			at, kind = d, evDeadline
		}
		if at < 0 {
			break
		}
		r.advance(max(at, r.last))
		if kind == evFinish {
			r.reqs.finish(heap.Pop(&r.finishes).(*job))
		}
		if err := r.settleAndCollect(); err != nil {
			return nil, fmt.Errorf("scenario %s, policy %s, draining: %w", r.sc.Name, r.res.Policy, err)
		}
	}
	r.res.Trace = r.policy.trace
	ended := 0
	for i := range r.names {
		ended += r.total.levels[i].dispatched + r.total.levels[i].rejected
	}
	if ended != int(r.nextID) {
		return nil, fmt.Errorf("scenario %s, policy %s: %d requests arrived, %d were dispatched or rejected", r.sc.Name, r.res.Policy, r.nextID, ended)
	}
	for i, name := range r.names {
		a := &r.total.levels[i]
		p99, _ := waitQuantile(a.waits, 0.99)
		lr := LevelResult{Name: name, Dispatched: a.dispatched, Rejected: a.rejected, WaitP99: p99, NominalSeats: nominal[i]}
		if s, ok := r.applied[name]; ok {
			lr.Pool, lr.ConfiguredShares, lr.FinalShares = true, r.sc.Levels[i].Shares, s
		}
		r.res.Levels = append(r.res.Levels, lr)
	}
	return r.res, nil
}

// finishHeap orders executing jobs by finish time, then by request order.
type finishHeap []*job

func (h finishHeap) Len() int { return len(h) }
func (h finishHeap) Less(i, j int) bool {
	fi, fj := h[i].startAt+h[i].service, h[j].startAt+h[j].service
	if fi != fj {
		return fi < fj
	}
	return h[i].id < h[j].id
}
func (h finishHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *finishHeap) Push(x any)   { *h = append(*h, x.(*job)) }
func (h *finishHeap) Pop() any {
	old := *h
	j := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return j
}
