package dispatch

import (
	"sort"

	"github.com/apf-operator/apf-operator/internal/apf/fairqueue"
)

// State is a JSON-serialisable dump of the dispatcher, for debugging.
type State struct {
	// ServerConcurrencyLimit is SCL, in width units.
	ServerConcurrencyLimit int `json:"serverConcurrencyLimit"`
	// ExecutingWidth is the width of the executing non-exempt requests.
	ExecutingWidth int `json:"executingWidth"`
	// Waiting is the number of waiting requests.
	Waiting int `json:"waiting"`
	// Levels lists the configured levels, highest priority first, then removed levels whose
	// queues still drain.
	Levels []LevelState `json:"levels"`
}

// LevelState describes one priority level.
type LevelState struct {
	Name  string `json:"name"`
	Level int32  `json:"level"`
	// Exempt is true for level 0: never queued, not counted against the limit.
	Exempt bool `json:"exempt,omitempty"`
	// Draining is true for a level removed from the configuration whose queues still drain.
	Draining bool `json:"draining,omitempty"`
	// AssuredConcurrency is the level's ACV, in width units: its nominal concurrency limit
	// (kube-apiserver's NominalCL).
	AssuredConcurrency int `json:"assuredConcurrency"`
	// MinConcurrency is the ACV less its lendable part (spec.lendablePercent; all of it when
	// absent): the seats the level never lends. 0 for the exempt level. A removed level keeps its limits while
	// its queues drain, as kube-apiserver's quiescing levels do.
	MinConcurrency int `json:"minConcurrency"`
	// MaxConcurrency is the ACV plus what the level may borrow (spec.borrowingLimitPercent;
	// the server concurrency limit when unlimited). 0 for the exempt level.
	MaxConcurrency int `json:"maxConcurrency"`
	// ExecutingWidth is the width of the level's executing requests; for the exempt level it
	// is the number of executing requests.
	ExecutingWidth int `json:"executingWidth"`
	// Waiting is the number of the level's waiting requests.
	Waiting int `json:"waiting"`
	// Queues lists the level's non-empty queues.
	Queues []fairqueue.QueueState `json:"queues,omitempty"`
	// DrainingQueues lists the non-empty queues of an earlier queue configuration of the
	// level (queue count or hand size changed), which drain before Queues.
	DrainingQueues []fairqueue.QueueState `json:"drainingQueues,omitempty"`
}

// Snapshot returns the dispatcher's current state.
func (d *Dispatcher) Snapshot() State {
	d.lock()
	defer d.unlock()
	st := State{ServerConcurrencyLimit: d.scl, ExecutingWidth: d.executing, Waiting: d.waiting}
	levels := make([]*level, 0, len(d.cfg.levels)+len(d.order))
	for _, lv := range d.cfg.levels {
		levels = append(levels, lv)
	}
	for _, lv := range d.order {
		if lv.retired {
			levels = append(levels, lv)
		}
	}
	sort.SliceStable(levels, func(i, j int) bool {
		if levels[i].retired != levels[j].retired {
			return !levels[i].retired
		}
		return levels[i].priority < levels[j].priority
	})
	for _, lv := range levels {
		st.Levels = append(st.Levels, lv.stateLocked())
	}
	return st
}

func (lv *level) stateLocked() LevelState {
	ls := LevelState{Name: lv.name, Level: lv.priority, Exempt: lv.exempt, Draining: lv.retired,
		AssuredConcurrency: lv.acv, MinConcurrency: lv.minCL, MaxConcurrency: lv.maxCL, ExecutingWidth: lv.executing, Waiting: lv.waiting}
	if lv.exempt {
		ls.ExecutingWidth = int(lv.exemptExecuting.Load())
		return ls
	}
	for i, s := range lv.sets {
		if i == len(lv.sets)-1 {
			ls.Queues = s.AppendState(nil)
		} else {
			ls.DrainingQueues = s.AppendState(ls.DrainingQueues)
		}
	}
	return ls
}
