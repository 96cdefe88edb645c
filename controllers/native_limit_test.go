package controllers

import (
	"context"
	"fmt"
	"testing"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// TestLimitDamperHoldsFlappingReadings: two replicas of 600 and 300 seats read through the
// Service in turn never move the limit held, whichever came first; nor does a single low
// reading between steady ones.
func TestLimitDamperHoldsFlappingReadings(t *testing.T) {
	for _, first := range []int64{600, 300} {
		var d limitDamper
		reading := first
		for i := range 100 {
			if got := d.observe(reading); got != first {
				t.Fatalf("first %d: reading %d (%d) holds %d", first, i, reading, got)
			}
			reading = 900 - reading
		}
	}
	var d limitDamper
	for i, r := range []int64{600, 600, 150, 600, 0, 150, 150, 600, 600} {
		if got := d.observe(r); got != 600 {
			t.Fatalf("reading %d (%d): holds %d, want 600", i, r, got)
		}
	}
}

// TestLimitDamperApplies: a decrease applies after limitDecreaseReadings consecutive lower
// readings, to the highest of them; an increase after limitIncreaseReadings higher ones, to the
// lowest of them.
func TestLimitDamperApplies(t *testing.T) {
	var d limitDamper
	d.observe(600)
	for i, r := range []int64{400, 300} {
		if got := d.observe(r); got != 600 {
			t.Fatalf("decrease reading %d: holds %d before %d readings", i, got, limitDecreaseReadings)
		}
	}
	if got := d.observe(350); got != 400 {
		t.Fatalf("after %d lower readings (400, 300, 350): holds %d, want the highest, 400", limitDecreaseReadings, got)
	}
	for i := range limitIncreaseReadings - 1 {
		if got := d.observe(int64(500 + i)); got != 400 {
			t.Fatalf("increase reading %d: holds %d before %d readings", i, got, limitIncreaseReadings)
		}
	}
	if got := d.observe(900); got != 500 {
		t.Fatalf("after %d higher readings: holds %d, want the lowest, 500", limitIncreaseReadings, got)
	}
	if got := d.observe(0); got != 500 {
		t.Fatalf("an unknown reading moved the limit to %d", got)
	}
}

// TestReplicaLimitsMinimum: the reading is the smallest limit over the replicas; a replica
// that cannot be read makes it unknown, and the replicas are then skipped for a while.
func TestReplicaLimitsMinimum(t *testing.T) {
	metrics := func(scl int) apfmetrics.Getter {
		return func(context.Context, string) ([]byte, error) {
			return fmt.Appendf(nil, "apiserver_flowcontrol_nominal_limit_seats{priority_level=\"exempt\"} 0\n"+
				"apiserver_flowcontrol_upper_limit_seats{priority_level=\"exempt\"} %d\n", scl), nil
		}
	}
	getters := map[string]apfmetrics.Getter{"10.0.0.1:443": metrics(600), "10.0.0.2:443": metrics(300), "10.0.0.3:443": metrics(450)}
	r := &replicaLimits{source: &replicaSource{getters: getters}}
	lowest, err := r.readFrom(context.Background(), getters)
	if err != nil || lowest != 300 {
		t.Fatalf("minimum over 600, 300, 450: %d, %v; want 300", lowest, err)
	}
	getters["10.0.0.4:443"] = func(context.Context, string) ([]byte, error) { return nil, fmt.Errorf("unreachable") }
	if _, err := r.readFrom(context.Background(), getters); err == nil {
		t.Fatal("a replica that cannot be read gave a minimum")
	}
}
