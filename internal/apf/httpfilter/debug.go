package httpfilter

import (
	"encoding/json"
	"net/http"

	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// DebugState is the JSON document DebugHandler serves.
type DebugState struct {
	// Priorities are the RequestPriorities in effect, logically highest first.
	Priorities []DebugPriority `json:"requestPriorities"`
	// FlowSchemas are the FlowSchemas in the order the classifier tries them: the implicit
	// system-top for system:masters (ahead of every FlowSchema), the FlowSchemas in effect best
	// match first, then the catch-all backstop.
	FlowSchemas []DebugFlowSchema `json:"flowSchemas"`
	// Dispatcher holds the levels, their queues and counts.
	Dispatcher dispatch.State `json:"dispatcher"`
}

// DebugPriority describes a RequestPriority in effect.
type DebugPriority struct {
	Name             string `json:"name"`
	Level            int32  `json:"priorityLevel"`
	Exempt           bool   `json:"exempt,omitempty"`
	Shares           int32  `json:"assuredConcurrencyShares,omitempty"`
	QueuesPerWidth   int32  `json:"queuesPerWidth,omitempty"`
	HandSize         int32  `json:"handSize,omitempty"`
	QueueLengthLimit int32  `json:"queueLengthLimit,omitempty"`
	Backstop         bool   `json:"backstop,omitempty"`
}

// DebugFlowSchema describes a FlowSchema in effect.
type DebugFlowSchema struct {
	Name             string `json:"name"`
	MatchingPriority int32  `json:"matchingPriority"`
	RequestPriority  string `json:"requestPriority"`
	// Distinguisher is the distinguisher source (user or namespace), empty when none.
	Distinguisher string `json:"distinguisher,omitempty"`
	Conjunctions  int    `json:"conjunctions"`
	// Backstop is true for the implicit schemas, which are no API objects.
	Backstop bool `json:"backstop,omitempty"`
}

// DebugHandler serves DebugState as JSON. It shows the configuration and queue state, including
// FlowSchema and RequestPriority names: serve it only to operators.
func DebugHandler(engine *apf.Engine) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed: use GET", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(Debug(engine))
	})
}

// Debug returns the engine's current DebugState.
func Debug(engine *apf.Engine) DebugState {
	cfg := engine.Config()
	st := DebugState{Dispatcher: engine.State()}
	for _, p := range cfg.Priorities {
		st.Priorities = append(st.Priorities, DebugPriority{Name: p.Name, Level: p.Level, Exempt: p.Exempt(),
			Shares: p.Shares, QueuesPerWidth: p.QueuesPerWidth, HandSize: p.HandSize,
			QueueLengthLimit: p.QueueLengthLimit, Backstop: p.Backstop})
	}
	for _, s := range append(append([]*effective.Schema{cfg.MastersBackstop}, cfg.Schemas...), cfg.CatchAll) {
		d := DebugFlowSchema{Name: s.Name, MatchingPriority: s.MatchingPriority, RequestPriority: s.Priority.Name,
			Conjunctions: len(s.Match), Backstop: s.Backstop}
		if s.Distinguisher != nil {
			d.Distinguisher = string(s.Distinguisher.Source)
		}
		st.FlowSchemas = append(st.FlowSchemas, d)
	}
	return st
}
