package controllers

import (
	"context"
	"os"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// idleWindow is how long TestIdleClusterSeesNoWrites watches. The specification's idle minute
// is APF_IDLE_WINDOW=1m; `make test` uses 5s with a 1s defaults resync and a 2s informer
// resync, so the window spans five full defaults passes and two informer resyncs: every
// periodic mechanism that could write during a minute runs several times within it.
func idleWindow(t *testing.T) time.Duration {
	if v := os.Getenv("APF_IDLE_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("APF_IDLE_WINDOW=%q: %v", v, err)
		}
		return d
	}
	return 5 * time.Second
}

func TestIdleClusterSeesNoWrites(t *testing.T) {
	resetCluster(t)
	informerResync := 2 * time.Second
	cfg := nativeDefaults() // the chart's settings: native defaults, projected
	cfg.options.ResyncPeriod = time.Second
	cfg.syncPeriod = &informerResync
	op := startOperator(t, cfg)
	waitAllReady(t, defaultNames, defaultNames)

	window := idleWindow(t)
	writes, versions := op.writes.Load(), resourceVersions(t)
	passes := defaultsPasses(t)
	start := time.Now()
	time.Sleep(window) // watching the idle period is the test
	if n := op.writes.Load() - writes; n != 0 {
		t.Errorf("the operator made %d writes during an idle %s: %v", n, window, op.writesSince(writes))
	}
	if after := resourceVersions(t); len(after) != len(versions) {
		t.Errorf("objects changed during the idle period: %v -> %v", versions, after)
	} else {
		for name, rv := range versions {
			if after[name] != rv {
				t.Errorf("%s was written during the idle period (resourceVersion %s -> %s)", name, rv, after[name])
			}
		}
	}
	if n := eventsSince(t, start); n != 0 {
		t.Errorf("%d events emitted during the idle period", n)
	}
	if ran := defaultsPasses(t) - passes; ran < int(window/cfg.options.ResyncPeriod)-1 {
		t.Errorf("only %d defaults passes ran during %s: the resync did not run, so the window proves nothing", ran, window)
	}
}

// resourceVersions maps every RequestPriority and FlowSchema to its resourceVersion.
func resourceVersions(t *testing.T) map[string]string {
	rps, fss, err := listOurs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, rp := range rps.Items {
		out["rp/"+rp.Name] = rp.ResourceVersion
	}
	for _, fs := range fss.Items {
		out["fs/"+fs.Name] = fs.ResourceVersion
	}
	return out
}

// eventsSince counts the events emitted (or repeated as a series) at or after start.
func eventsSince(t *testing.T, start time.Time) int {
	var list eventsv1.EventList
	if err := k8s.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if !e.EventTime.Time.Before(start) || (e.Series != nil && !e.Series.LastObservedTime.Time.Before(start)) {
			n++
		}
	}
	return n
}

// defaultsPasses reads controller-runtime's count of the defaults reconciler's passes (shared
// by every operator of this process; only differences are meaningful).
func defaultsPasses(t *testing.T) int {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == "apf-defaults" {
					total += int(m.GetCounter().GetValue())
				}
			}
		}
	}
	return total
}
