package sim

import (
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/autopilot"
)

func TestSpeedStatic(t *testing.T) {
	sc := Scenarios()[0]
	start := time.Now()
	res, err := Run(&sc, Static, autopilot.Config{Quantile: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v: %+v", time.Since(start), res)
}

func TestSpeedAllStatic(t *testing.T) {
	start := time.Now()
	for _, sc := range Scenarios() {
		res, err := Run(&sc, Static, autopilot.Config{Quantile: 0.95})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range res.Levels {
			t.Logf("%s %s: %+v", sc.Name, l.Name, l)
		}
	}
	t.Logf("%v", time.Since(start))
}
