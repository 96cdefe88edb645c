package autopilot

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// replicaText is the /metrics of a kube-apiserver replica that has run for age: level busy's
// seat demand at 1.3 times its 10 seats all along, level idle's at none, 10 requests a second
// dispatched at each (kube-apiserver's demand histogram counts nanoseconds).
func replicaText(age time.Duration) string {
	ns := float64(age.Nanoseconds())
	var b strings.Builder
	b.WriteString("# TYPE apiserver_flowcontrol_nominal_limit_seats gauge\n")
	for _, l := range []string{"busy", "idle"} {
		fmt.Fprintf(&b, "apiserver_flowcontrol_nominal_limit_seats{priority_level=%q} 10\n", l)
	}
	b.WriteString("# TYPE apiserver_flowcontrol_current_limit_seats gauge\n")
	for _, l := range []string{"busy", "idle"} {
		fmt.Fprintf(&b, "apiserver_flowcontrol_current_limit_seats{priority_level=%q} 10\n", l)
	}
	b.WriteString("# TYPE apiserver_flowcontrol_dispatched_requests_total counter\n")
	for _, l := range []string{"busy", "idle"} {
		fmt.Fprintf(&b, "apiserver_flowcontrol_dispatched_requests_total{flow_schema=%q,priority_level=%q} %g\n", l, l, 10*age.Seconds())
	}
	b.WriteString("# TYPE apiserver_flowcontrol_demand_seats histogram\n")
	for _, l := range []string{"busy", "idle"} {
		sum := 0.0
		for _, le := range []string{"0.2", "0.4", "0.6", "0.8", "1", "1.2", "1.4", "1.7", "2", "2.8", "4", "6", "+Inf"} {
			c := 0.0
			switch {
			case l == "idle":
				c = ns
			case le != "0.2" && le != "0.4" && le != "0.6" && le != "0.8" && le != "1" && le != "1.2":
				c, sum = ns, 1.3*ns
			}
			fmt.Fprintf(&b, "apiserver_flowcontrol_demand_seats_bucket{priority_level=%q,le=%q} %g\n", l, le, c)
		}
		fmt.Fprintf(&b, "apiserver_flowcontrol_demand_seats_sum{priority_level=%q} %g\n", l, sum)
		fmt.Fprintf(&b, "apiserver_flowcontrol_demand_seats_count{priority_level=%q} %g\n", l, ns)
	}
	return b.String()
}

// fakeReplica serves replicaText for a replica started at start, as of the test's clock.
func fakeReplica(start time.Time, now *time.Time) apfmetrics.Getter {
	return func(context.Context, string) ([]byte, error) { return []byte(replicaText(now.Sub(start))), nil }
}

// runReplicas runs the loop over 4 windows of a minute; at window i it reads the replicas
// readAt(i) names, merged, and returns how many steps the loop made.
func runReplicas(t *testing.T, replicas map[string]apfmetrics.Getter, now *time.Time, readAt func(int) []string) int {
	t.Helper()
	busy, _ := lvl("busy", 20, 0, 0)
	idle, _ := lvl("idle", 20, 0, 0)
	levels := []Level{busy, idle}
	l := NewLoop(DefaultConfig(), Memory{})
	var prev *apfmetrics.Snapshot
	steps := 0
	for i := range 4 {
		*now = t0.Add(time.Duration(i) * time.Minute)
		read := map[string]apfmetrics.Getter{}
		for _, name := range readAt(i) {
			read[name] = replicas[name]
		}
		cur, err := apfmetrics.ReadReplicas(context.Background(), read)
		if err != nil {
			t.Fatal(err)
		}
		cur.Time = *now
		w := WindowFrom(DefaultConfig(), prev, cur, []string{"busy", "idle"})
		prev = cur
		s := l.Observe(*now, levels, w)
		t.Logf("window %d (%v): %s: %s", i, readAt(i), s.State, s.Message)
		if s.Changed {
			steps++
			levels[0].Shares, levels[1].Shares = s.Applied["busy"], s.Applied["idle"]
		}
	}
	return steps
}

// TestReplicaSwitchMakesNoStep: three kube-apiserver replicas started 10 minutes, 10 hours and
// 10 days ago. Read one at a time, as through the kubernetes Service, each window going to
// an older one, the counters jump by hours of demand: no window may count, and the loop makes
// no step. Read all three every time and merged, the same demand makes windows that count,
// and the loop steps (busy under pressure, idle slack).
func TestReplicaSwitchMakesNoStep(t *testing.T) {
	var now time.Time
	replicas := map[string]apfmetrics.Getter{
		"10.0.0.1:6443": fakeReplica(t0.Add(-10*time.Minute), &now),
		"10.0.0.2:6443": fakeReplica(t0.Add(-10*time.Hour), &now),
		"10.0.0.3:6443": fakeReplica(t0.Add(-240*time.Hour), &now),
	}
	order := []string{"10.0.0.1:6443", "10.0.0.2:6443", "10.0.0.3:6443", "10.0.0.3:6443"}
	if steps := runReplicas(t, replicas, &now, func(i int) []string { return order[i : i+1] }); steps != 0 {
		t.Errorf("reading one replica, then an older one: %d steps, want none", steps)
	}
	all := func(int) []string { return []string{"10.0.0.1:6443", "10.0.0.2:6443", "10.0.0.3:6443"} }
	if steps := runReplicas(t, replicas, &now, all); steps == 0 {
		t.Error("reading every replica every time: no step; the fixture does not drive the loop")
	}
}
