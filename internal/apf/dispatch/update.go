package dispatch

import (
	"sort"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/fairqueue"
)

// Update applies a new effective configuration atomically while requests are in flight (see
// the package doc). A nil configuration, or one without levels, is ignored.
func (d *Dispatcher) Update(cfg *effective.Config) {
	if cfg == nil || len(cfg.Priorities) == 0 {
		return
	}
	d.updateMu.Lock()
	defer d.updateMu.Unlock()
	old := d.cur.Load()
	next, changes := d.plan(cfg, old)

	now := d.now()
	d.lock()
	d.applyLocked(next, old, changes)
	d.dispatchLocked(now)
	d.unlock()

	d.publishAssured(changes, old, next)
	d.unconfigure(old)
}

// levelChange is what Update does to one level of the new configuration.
type levelChange struct {
	lv       *level
	priority int32
	acv      int
	minCL    int // the bounds of borrowing (borrow.go)
	maxCL    int
	newSet   *fairqueue.QueueSet // nil: keep the current queues
	limit    int                 // new queue length limit of the kept queues
}

// plan builds the new configuration outside the dispatcher's lock: it reuses the levels that
// keep their name (and exemptness), makes queue sets for new or reshaped levels and resolves
// the metric children of every schema.
func (d *Dispatcher) plan(cfg *effective.Config, old *config) (*config, []levelChange) {
	next := &config{src: cfg, levels: make(map[string]*level, len(cfg.Priorities)),
		flows: newFlowTable(len(cfg.Schemas) + 2), metrics: d.metrics, mu: &d.mu}
	changes := make([]levelChange, 0, len(cfg.Priorities))
	for _, p := range cfg.Priorities {
		ch := levelChange{priority: p.Level, acv: cfg.AssuredConcurrency(p, d.scl)}
		if old != nil {
			if lv := old.levels[p.Name]; lv != nil && lv.exempt == p.Exempt() {
				ch.lv = lv
			}
		}
		if ch.lv == nil {
			ch.lv = &level{name: p.Name, exempt: p.Exempt()}
		}
		if !p.Exempt() {
			d.planQueues(&ch, p)
			ch.minCL, ch.maxCL = levelLimits(ch.acv, p, d.scl)
		}
		next.levels[p.Name] = ch.lv
		changes = append(changes, ch)
	}
	next.lowest = next.levels[cfg.Priorities[len(cfg.Priorities)-1].Name]
	schemas := append(append([]*effective.Schema(nil), cfg.Schemas...), cfg.MastersBackstop, cfg.CatchAll)
	for _, s := range schemas {
		if s == nil || s.Priority == nil || next.levels[s.Priority.Name] == nil {
			continue
		}
		if next.flows.get(s) != nil {
			continue // listed twice: one flow, one hold on its series
		}
		lv := next.levels[s.Priority.Name]
		next.flows.put(s, newConfiguredFlow(lv, d.metrics, s.Name, &d.mu))
	}
	return next, changes
}

// planQueues decides whether a non-exempt level keeps its queues: a new level, or one whose
// queue count or hand size changed, gets a new set (the old one drains); a changed queue
// length limit applies to the kept queues.
func (d *Dispatcher) planQueues(ch *levelChange, p *effective.Priority) {
	want := fairqueue.Config{QueuesPerWidth: int(p.QueuesPerWidth), HandSize: int(p.HandSize),
		QueueLengthLimit: int(p.QueueLengthLimit), ServiceTimeGuess: d.guess}
	have := ch.lv.queueConfig
	if have.QueuesPerWidth != 0 && have.QueuesPerWidth == want.QueuesPerWidth &&
		(want.QueuesPerWidth == 1 || have.HandSize == want.HandSize) {
		ch.limit = max(want.QueueLengthLimit, 1)
		ch.lv.queueConfig.QueueLengthLimit = ch.limit
		return
	}
	ch.newSet, ch.lv.queueConfig = newQueueSet(p, d.guess)
}

// applyLocked publishes next: level fields, queue sets, retired levels and the dispatch order.
func (d *Dispatcher) applyLocked(next, old *config, changes []levelChange) {
	for _, ch := range changes {
		lv := ch.lv
		lv.priority, lv.acv, lv.retired = ch.priority, ch.acv, false
		d.setLimitsLocked(lv, ch.minCL, ch.maxCL)
		switch {
		case ch.newSet != nil:
			lv.sets = append(lv.sets, ch.newSet)
			lv.pruneDrained()
		case !lv.exempt:
			lv.active().SetQueueLengthLimit(ch.limit)
		}
	}
	if old != nil {
		for name, lv := range old.levels {
			if next.levels[name] != lv {
				lv.retired = true
				if lv.waiting == 0 {
					d.setLimitsLocked(lv, 0, lv.maxCL) // gone: it reserves nothing
				}
			}
		}
	}
	order := make([]*level, 0, len(next.levels)+len(d.order))
	for _, lv := range next.levels {
		if !lv.exempt {
			order = append(order, lv)
		}
	}
	for _, lv := range d.order { // removed levels, now or earlier, that still hold requests
		if lv.retired && lv.waiting > 0 {
			order = append(order, lv)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.priority != b.priority {
			return a.priority < b.priority
		}
		return !a.retired && b.retired
	})
	d.order = order
	d.cfg = next
	d.cur.Store(next)
}

// publishAssured records every level's limits and forgets the levels that are gone.
func (d *Dispatcher) publishAssured(changes []levelChange, old, next *config) {
	if d.metrics == nil {
		return
	}
	for _, ch := range changes {
		if !ch.lv.exempt {
			d.metrics.SetLimits(ch.lv.name, ch.acv, ch.minCL, ch.maxCL)
		}
	}
	if old != nil {
		for name := range old.levels {
			if next.levels[name] == nil {
				d.metrics.ForgetLevel(name)
			}
		}
	}
}
