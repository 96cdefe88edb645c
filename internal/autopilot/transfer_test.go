package autopilot

import (
	"testing"
	"time"
)

// TestLoopVictimReclaimsFromFlooder: flood took 20 of victim's shares while victim was idle
// (flood holds 60 of its configured 40, victim 20 of 40). Now both are under pressure: flood
// floods its own level (utilisation 3, thousands rejected), victim needs its seats back
// (utilisation 1.2, rejecting). The victim is back at its configured 40 within two windows of
// asking, in one step (beyond its 25% step: the shares are its due), although flood stays
// under pressure; flood's rejections after the step (a flood's) do not roll it back.
func TestLoopVictimReclaimsFromFlooder(t *testing.T) {
	window := func(floodShares, victimShares int32) ([]Level, Window) {
		flood, df := lvl("flood", floodShares, 3*float64(floodShares), 5000)
		victim, dv := lvl("victim", victimShares, 1.2*float64(victimShares), 40)
		flood.ConfiguredShares, victim.ConfiguredShares = 40, 40
		flood.Bounds = Bounds{MinShares: 10, MaxShares: 80, MaxStepPercent: 25}
		victim.Bounds = flood.Bounds
		return pool(entry(flood, df), entry(victim, dv))
	}
	l := NewLoop(DefaultConfig(), Memory{})
	shares := map[string]int32{"flood": 60, "victim": 20}
	for i := range 4 {
		levels, w := window(shares["flood"], shares["victim"])
		if i >= 2 { // after the step, the flood rejects twice as much as before it
			d := w.Levels["flood"]
			d.Rejected = 20000
			w.Levels["flood"] = d
		}
		s := l.Observe(t0.Add(time.Duration(i)*time.Minute), levels, w)
		if s.RolledBack {
			t.Fatalf("window %d rolled back: %s", i+1, s.Message)
		}
		shares = s.Applied
		if i == 1 && (shares["victim"] != 40 || shares["flood"] != 40) {
			t.Fatalf("window 2 (the second of asking): %v, want victim back at 40 from flood; %s: %s; why %q",
				shares, s.State, s.Message, s.Recommended["victim"].Why)
		}
	}
	if shares["victim"] != 40 || shares["flood"] != 40 {
		t.Fatalf("after 4 windows: %v, want both at their configured 40", shares)
	}
}

// TestReclaimOnlyUpToConfigured: a victim below its configured shares takes back no more
// than them from a level above its own, and a level at its configured shares gives nothing
// this way (only as a slack level, to its target).
func TestReclaimOnlyUpToConfigured(t *testing.T) {
	flood, df := lvl("flood", 60, 180, 5000)
	victim, dv := lvl("victim", 20, 60, 40)
	other, do := lvl("other", 40, 27, 0) // within the band, at its configured shares
	flood.ConfiguredShares, victim.ConfiguredShares = 40, 40
	levels, w := pool(entry(flood, df), entry(victim, dv), entry(other, do))
	got := shares(Recommend(DefaultConfig(), levels, w))
	if got["victim"] != 40 || got["flood"] != 40 || got["other"] != 40 {
		t.Fatalf("%v, want every level at its configured 40", got)
	}
}
