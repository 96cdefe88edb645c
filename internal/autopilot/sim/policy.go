package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/apf-operator/apf-operator/internal/autopilot"
)

// Policy is how a run sets the pool's shares.
type Policy int

// The compared policies.
const (
	// Static keeps the configured (Git) shares; the pool's levels lend and borrow nothing.
	Static Policy = iota
	// StaticBorrowing keeps the configured shares, the pool's levels lending
	// TenantLendablePercent of their seats and borrowing without limit: kube-apiserver's own
	// borrowing, what a user would turn on first.
	StaticBorrowing
	// RecommendOnce (with the pool's levels lending and borrowing as in StaticBorrowing) applies, at Scenario.OnceAfter, one autopilot.Recommend of one window
	// covering the run so far, without the step limit (MaxStepPercent 100) but within the
	// bounds; then keeps those shares.
	RecommendOnce
	// ClosedLoop runs autopilot.Loop at the end of every window and applies its steps, the
	// pool's levels lending and borrowing as in StaticBorrowing.
	ClosedLoop
)

// Policies lists the policies in the table's order.
var Policies = []Policy{Static, StaticBorrowing, RecommendOnce, ClosedLoop}

// lends reports whether the pool's levels lend and borrow under the policy.
func (p Policy) lends() bool { return p != Static }

// String returns the policy's name in the table.
func (p Policy) String() string {
	switch p {
	case Static:
		return "static"
	case StaticBorrowing:
		return "static + borrowing"
	case RecommendOnce:
		return "recommend-once"
	case ClosedLoop:
		return "closed loop + borrowing"
	}
	return "unknown"
}

// policy is a Policy's state during a run.
type policy struct {
	kind Policy
	cfg  autopilot.Config
	loop *autopilot.Loop
	// trace records each window's decision (Result.Trace).
	trace []string
}

func newLoop(p Policy, cfg autopilot.Config) *autopilot.Loop {
	if p != ClosedLoop {
		return nil
	}
	return autopilot.NewLoop(cfg, autopilot.Memory{})
}

// decide returns the pool's shares to apply after the window w (nil: no change) and whether
// they roll back a step. once is the window since the start, given once at OnceAfter.
func (p *policy) decide(now time.Time, levels []autopilot.Level, w autopilot.Window, once *autopilot.Window) (map[string]int32, bool) {
	switch p.kind {
	case RecommendOnce:
		if once == nil {
			return nil, false
		}
		unstepped := make([]autopilot.Level, len(levels))
		for i, l := range levels {
			l.Bounds.MaxStepPercent = 100
			unstepped[i] = l
		}
		out := map[string]int32{}
		for name, rec := range autopilot.Recommend(p.cfg, unstepped, *once) {
			out[name] = rec.Shares
		}
		return out, false
	case ClosedLoop:
		step := p.loop.Observe(now, levels, w)
		p.trace = append(p.trace, traceLine(now, levels, w, step))
		if !step.Changed {
			return nil, false
		}
		return step.Applied, step.RolledBack
	}
	return nil, false
}

// traceLine is one window of the closed loop's trace: the shares in force, each level's seat
// demand quantile over its nominal seats and rejections, and the loop's state.
func traceLine(now time.Time, levels []autopilot.Level, w autopilot.Window, step autopilot.Step) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", now.Sub(Epoch))
	for _, l := range levels {
		d := w.Levels[l.Name]
		fmt.Fprintf(&b, " %s=%d(%.0f/%.0f,%.0f rej)", l.Name, l.Shares, d.Seats, d.NominalSeats, d.Rejected)
	}
	fmt.Fprintf(&b, " %s: %s", step.State, step.Message)
	return b.String()
}
