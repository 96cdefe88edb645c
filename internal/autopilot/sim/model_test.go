package sim

import (
	"math"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/autopilot"
)

func TestSeatQuantile(t *testing.T) {
	// 0 seats for 50 s, 3 seats for 45 s, 7 seats for 5 s.
	a := levelAcc{demand: []time.Duration{50 * time.Second, 0, 0, 45 * time.Second, 0, 0, 0, 5 * time.Second}}
	for _, c := range []struct {
		q    float64
		want float64
	}{{0.5, 0}, {0.51, 3}, {0.95, 3}, {0.951, 7}, {1, 7}} {
		if got := a.seatQuantile(c.q); got != c.want {
			t.Errorf("quantile %v = %v, want %v", c.q, got, c.want)
		}
	}
	if got := (&levelAcc{}).seatQuantile(0.95); got != 0 {
		t.Errorf("empty quantile %v, want 0", got)
	}
}

func TestWaitQuantile(t *testing.T) {
	var waits []time.Duration
	for i := 100; i >= 1; i-- {
		waits = append(waits, time.Duration(i)*time.Millisecond)
	}
	if got, ok := waitQuantile(waits, 0.99); !ok || got != 99*time.Millisecond {
		t.Errorf("p99 %v %v, want 99ms", got, ok)
	}
	if _, ok := waitQuantile(nil, 0.99); ok {
		t.Error("p99 of nothing is known")
	}
}

// TestOfferedLoad checks the model against Little's law: a level far from its limit holds, on
// average, its arrival rate times the mean service time in seats; overloaded, it rejects.
func TestOfferedLoad(t *testing.T) {
	sc := scenario("load", "one light tenant, one overloaded", 7,
		tenant("light", 400, Constant(0.5), 0.5),
		tenant("heavy", 410, Constant(5), 5))
	sc.Duration, sc.OnceAfter = 30*time.Minute, 30*time.Minute
	r, err := newRunner(&sc, Static, autopilot.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.run()
	if err != nil {
		t.Fatal(err)
	}
	light := r.total.levels[3]
	var seatTime, total float64
	for s, d := range light.demand {
		seatTime += float64(s) * d.Seconds()
		total += d.Seconds()
	}
	t.Logf("light mean seats %.3f; heavy %+v", seatTime/total, res.Levels[4])
	if mean, want := seatTime/total, 0.5*4.0; math.Abs(mean-want) > 0.15*want {
		t.Errorf("light tenant held %.2f seats on average, want about %.1f (rate x mean service)", mean, want)
	}
	if light.rejected != 0 {
		t.Errorf("light tenant rejected %d requests", light.rejected)
	}
	// heavy offers 20 seats of work to its 12 (two tenants here): about 40% cannot be served.
	heavy := res.Levels[4]
	if frac := float64(heavy.Rejected) / float64(heavy.Rejected+heavy.Dispatched); frac < 0.3 || frac > 0.7 {
		t.Errorf("heavy tenant rejected %.2f of its requests, want about 0.4", frac)
	}
	if res.Levels[0].Rejected != 0 || !res.OtherSeatsKept || !res.PoolSumKept {
		t.Errorf("stand-ins disturbed: %+v", res)
	}
}
