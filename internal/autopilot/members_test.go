package autopilot

import (
	"strings"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// TestUnprojectedMemberLeftOut: the pool has busy, idle and ghost; kube-apiserver has no
// series for ghost (not projected). ghost is left out with a reason naming it, and busy and
// idle go on: their windows are complete and the loop steps between them, ghost's shares
// untouched.
func TestUnprojectedMemberLeftOut(t *testing.T) {
	zero := cumulative(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	busyPer := cumulative(0, 0, 0, 0, 0, 0, 0, 0, 0, 60e9, 0, 0, 0) // ratio 2.8: 28 seats of 10
	idlePer := cumulative(60e9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	snap := func(at time.Time, i int) *apfmetrics.Snapshot {
		scale := func(c []float64) []float64 {
			out := make([]float64, len(c))
			for j, v := range c {
				out[j] = v * float64(i)
			}
			return out
		}
		b, d := read(at, 10, 10, scale(busyPer), float64(100*i), 0, 0), read(at, 10, 10, scale(idlePer), float64(100*i), 0, 0)
		if i == 0 {
			b, d = read(at, 10, 10, zero, 0, 0, 0), read(at, 10, 10, zero, 0, 0, 0)
		}
		s := &apfmetrics.Snapshot{Time: at, Levels: map[string]apfmetrics.LevelSeats{"busy": b.Levels["l"], "idle": d.Levels["l"]},
			Flows: map[apfmetrics.Key]*apfmetrics.Flow{
				{PriorityLevel: "busy", FlowSchema: "f"}: b.Flows[apfmetrics.Key{PriorityLevel: "l", FlowSchema: "f"}],
				{PriorityLevel: "idle", FlowSchema: "f"}: d.Flows[apfmetrics.Key{PriorityLevel: "l", FlowSchema: "f"}]},
			Demand: map[string]*apfmetrics.LevelDemand{"busy": b.Demand["l"], "idle": d.Demand["l"]}}
		return s
	}
	busy, _ := lvl("busy", 10, 0, 0)
	idle, _ := lvl("idle", 10, 0, 0)
	ghost, _ := lvl("ghost", 10, 0, 0)
	levels := []Level{busy, ghost, idle}
	l := NewLoop(DefaultConfig(), Memory{})
	var prev *apfmetrics.Snapshot
	changed := false
	for i := range 4 {
		now := t0.Add(time.Duration(i) * time.Minute)
		cur := snap(now, i)
		in, out := Measurable(levels, cur)
		if len(in) != 2 || !strings.Contains(out["ghost"], "ghost") || !strings.Contains(out["ghost"], "not projected") {
			t.Fatalf("window %d: kept %v, left out %v", i, in, out)
		}
		names := []string{}
		for _, lv := range in {
			names = append(names, lv.Name)
		}
		w := WindowFrom(DefaultConfig(), prev, cur, names)
		prev = cur
		s := l.Observe(now, in, w)
		if i > 0 && w.Incomplete != "" {
			t.Fatalf("window %d incomplete: %s", i, w.Incomplete)
		}
		if _, ok := s.Applied["ghost"]; ok {
			t.Fatalf("window %d: the loop applied shares to ghost: %v", i, s.Applied)
		}
		if s.Changed {
			changed = true
			for j := range levels {
				if v, ok := s.Applied[levels[j].Name]; ok {
					levels[j].Shares = v
				}
			}
		}
	}
	if !changed || levels[0].Shares <= 10 || levels[1].Shares != 10 {
		t.Fatalf("after 4 windows: %+v, want busy above 10 and ghost at 10", levels)
	}
	// Without Measurable, ghost's missing series makes every window incomplete.
	if w := WindowFrom(DefaultConfig(), snap(t0, 1), snap(t0.Add(time.Minute), 2), []string{"busy", "ghost", "idle"}); w.Incomplete == "" {
		t.Fatal("a window with ghost's series missing is complete: the test proves nothing")
	}
}
