// Package demandmetrics_test checks the autopilot's reading of kube-apiserver's seat-demand
// metrics against a real kube-apiserver 1.36.3 (envtest): the families parse, two reads make a
// complete window for every priority level, and the demand histogram's time really is counted
// in nanoseconds (what docs/autopilot.md relies on to read its quantiles as time quantiles).
package demandmetrics_test

import (
	"context"
	"math"
	"sort"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
	"github.com/apf-operator/apf-operator/internal/autopilot"
	"github.com/apf-operator/apf-operator/test/envtestutil"
)

// demandWindow is how long the clients send requests between the two reads.
const demandWindow = 5 * time.Second

func TestDemandWindowFromKubeAPIServer(t *testing.T) {
	env := &envtest.Environment{BinaryAssetsDirectory: envtestutil.AssetsDir(t)}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	// alice's requests are no system user's: kube-apiserver's global-default level takes them
	// (and denies them after: authorization runs inside flow control, so they hold a seat).
	alice, err := env.AddUser(envtest.User{Name: "alice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	aliceCfg := alice.Config()
	aliceCfg.QPS, aliceCfg.Burst = -1, 0 // no client-side rate limit
	aliceClient := kubernetes.NewForConfigOrDie(aliceCfg)
	families := func() apfmetrics.Families {
		raw, err := client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f, err := apfmetrics.Parse(raw, apfmetrics.Prefix)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	read := func() *apfmetrics.Snapshot { return apfmetrics.NewSnapshot(families(), time.Now()) }
	waitFirstAdjustment(t, families)
	prev := read()
	// Four of alice's clients, each one request at a time: global-default's demand is at most
	// four seats; the admin's own requests go to exempt.
	var wg sync.WaitGroup
	end := time.Now().Add(demandWindow)
	for range 4 {
		wg.Go(func() {
			for time.Now().Before(end) {
				_, _ = aliceClient.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: 1})
			}
		})
	}
	for time.Now().Before(end) {
		if _, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	cur := read()
	var levels []string
	for name := range cur.Levels {
		levels = append(levels, name)
	}
	sort.Strings(levels)
	if len(levels) < 5 || len(cur.Demand) < len(levels) {
		t.Fatalf("levels %v, demand series for %d of them", levels, len(cur.Demand))
	}
	// The autopilot's shortest window (15 s) is a product choice against noise; the units and
	// the completeness checked here show in any window, so the test's is shorter.
	windowCfg := autopilot.DefaultConfig()
	windowCfg.MinWindow = demandWindow
	w := autopilot.WindowFrom(windowCfg, prev, cur, levels)
	if w.Incomplete != "" {
		t.Fatalf("window incomplete: %s", w.Incomplete)
	}
	elapsed := cur.Time.Sub(prev.Time).Seconds()
	for _, name := range levels {
		ns := cur.Demand[name].Ratio.Count - prev.Demand[name].Ratio.Count
		d := w.Levels[name]
		t.Logf("%-16s nominal %4.0f limit %4.0f  p95 %.2f seats  peak %.2f  dispatched %4.0f  demand time %.2fs of %.2fs",
			name, d.NominalSeats, cur.Levels[name].CurrentLimit, d.Seats, d.Peak, d.Dispatched, ns/1e9, elapsed)
		// The histogram's count grew by the nanoseconds between the reads. Each read closes the
		// interval at its own time, which a loaded machine delays, so the check is the unit, not
		// the precision: within a factor of two (the idle machine's figure, within 10%, is
		// logged above); seconds or milliseconds would be off by a factor of 1,000 or more.
		if ratio := ns / 1e9 / elapsed; ratio < 0.5 || ratio > 2 {
			t.Errorf("%s: demand histogram counted %.2f s over a %.2f s window", name, ns/1e9, elapsed)
		}
		if d.Seats < 0 || d.Peak < d.Seats || math.IsNaN(d.Seats) {
			t.Errorf("%s: seats %v, peak %v", name, d.Seats, d.Peak)
		}
	}
	if w.Levels["exempt"].Dispatched == 0 {
		t.Error("the admin's requests were not counted on the exempt level")
	}
	if g := w.Levels["global-default"]; g.Dispatched == 0 || g.Seats <= 0 || g.Seats > 4 {
		t.Errorf("global-default under four clients: %+v, want some demand, at most 4 seats", g)
	}
	// The levels nobody used have no demand (not a fifth of their seats, see ratioQuantile).
	for _, name := range []string{"catch-all", "workload-low", "node-high"} {
		if d := w.Levels[name]; d.Dispatched == 0 && d.Seats != 0 {
			t.Errorf("idle %s: %v seats", name, d.Seats)
		}
	}
}

// waitFirstAdjustment waits until kube-apiserver has run its periodic concurrency adjustment
// (every 10 s) with every priority level in place: that pass sets each level's demand
// denominator (its current limit; 1 before, which would read demand in seats instead of a
// fraction of the level's seats) and, in the same loop, publishes the level's
// apiserver_flowcontrol_demand_seats_high_watermark, which no other code path writes.
func waitFirstAdjustment(t *testing.T, families func() apfmetrics.Families) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		f := families()
		nominal := f.ByLabel(apfmetrics.NominalSeatsMetric, apfmetrics.LevelLabel)
		adjusted := f.ByLabel(apfmetrics.DemandHighWatermarkMetric, apfmetrics.LevelLabel)
		var missing []string
		for level := range nominal {
			if _, ok := adjusted[level]; !ok {
				missing = append(missing, level)
			}
		}
		if len(nominal) >= 5 && len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver has not adjusted its levels' concurrency after a minute: %d levels, not yet %v",
				len(nominal), missing)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
