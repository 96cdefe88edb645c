package metrics

import (
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// pairs gathers reg and returns the dispatched count of each (level, schema) series.
func pairs(t *testing.T, reg *prometheus.Registry) map[flowKey]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[flowKey]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "apf_operator_dispatched_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var k flowKey
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case LabelPriorityLevel:
					k.level = l.GetValue()
				case LabelFlowSchema:
					k.schema = l.GetValue()
				}
			}
			got[k] = m.GetCounter().GetValue()
		}
	}
	return got
}

// TestSeriesDeletedWhenUnheld: a configured series stays while a configuration or a request
// holds it and leaves with the last holder; a late record on the deleted Flow shows nowhere,
// and the pair's next Flow starts from zero.
func TestSeriesDeletedWhenUnheld(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	var mu sync.Mutex
	f := m.ConfiguredFlow("l", "s")
	f.Guard(&mu)
	mu.Lock()
	if !f.HoldGuarded() {
		t.Fatal("HoldGuarded refused a live Flow")
	}
	f.DispatchedGuarded(0)
	mu.Unlock()
	if !f.Hold() { // an exempt-style holder, without the lock
		t.Fatal("Hold refused a live Flow")
	}
	m.Unconfigured(f)
	if got := pairs(t, reg); got[flowKey{"l", "s"}] != 1 || f.Deleted() {
		t.Fatalf("series %v, deleted %v after Unconfigured with requests holding it; want it kept", got, f.Deleted())
	}
	if f.Release() && m.DeleteIfUnused(f) {
		t.Fatal("deleted while a guarded hold remains")
	}
	mu.Lock()
	f.FinishedGuarded(time.Millisecond)
	unused := f.ReleaseGuarded()
	if !unused || !m.DeleteIfUnusedGuarded(f) {
		mu.Unlock()
		t.Fatalf("last release: unused %v; want the series deleted", unused)
	}
	mu.Unlock()
	if got := pairs(t, reg); len(got) != 0 {
		t.Fatalf("series after the last holder left: %v, want none", got)
	}
	if f.Hold() || f.HoldGuarded() {
		t.Fatal("a deleted Flow accepted a hold")
	}
	f.Finished(time.Second) // a late record by a bug: must not bring the series back
	f.Dispatched(0)
	if got := pairs(t, reg); len(got) != 0 {
		t.Fatalf("a record on the deleted Flow resurrected %v", got)
	}
	g := m.ConfiguredFlow("l", "s")
	if g == f || g.Deleted() {
		t.Fatal("the pair's next Flow is the deleted one")
	}
	if got := pairs(t, reg); got[flowKey{"l", "s"}] != 0 || len(got) != 1 {
		t.Fatalf("new series %v, want one at zero", got)
	}
	if executing(t, reg) != 0 {
		t.Fatal("the new series' executing gauge is not zero")
	}
}

// TestCollectionDeletesUnheldTransientFlows: a transient Flow nobody holds is dropped at
// collection; one obtained by Flow alone, the old way, is kept.
func TestCollectionDeletesUnheldTransientFlows(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	kept := m.Flow("l", "kept")
	gone := m.TransientFlow("l", "gone")
	held := m.TransientFlow("l", "held")
	if !held.Hold() {
		t.Fatal("Hold refused a live Flow")
	}
	got := pairs(t, reg)
	if _, ok := got[flowKey{"l", "kept"}]; !ok || len(got) != 2 {
		t.Fatalf("series %v; want kept and held", got)
	}
	if !gone.Deleted() || kept.Deleted() || held.Deleted() {
		t.Fatalf("deleted: gone %v kept %v held %v; want only gone", gone.Deleted(), kept.Deleted(), held.Deleted())
	}
	if !held.Release() || !m.DeleteIfUnused(held) {
		t.Fatal("the last release of a transient Flow did not delete it")
	}
	if got := pairs(t, reg); len(got) != 1 {
		t.Fatalf("series %v; want kept only", got)
	}
}

// TestHoldRacesDeletion: holds and releases without the lock race deletions; a hold that
// succeeded always finds its series collected until it is released (run with -race).
func TestHoldRacesDeletion(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 500 {
				f := m.TransientFlow("l", "s")
				if !f.Hold() {
					continue // deleted between lookup and hold: the caller looks again
				}
				f.Dispatched(0)
				if f.Deleted() {
					t.Error("a held Flow was deleted")
				}
				f.Finished(0)
				if f.Release() {
					m.DeleteIfUnused(f)
				}
			}
		})
	}
	wg.Wait()
	if got := pairs(t, reg); len(got) != 0 {
		t.Fatalf("series %v left after every holder released; want none", got)
	}
}
