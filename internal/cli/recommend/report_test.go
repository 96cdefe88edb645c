package recommend

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/apf-operator/apf-operator/internal/autopilot"
)

// handMade is a pool of three levels and a recommendation for it, written by hand.
func handMade(batchTo, webTo int32) ([]autopilot.Level, map[string]autopilot.Recommendation) {
	levels := []autopilot.Level{
		{Name: "apf-web", Object: "web", Shares: 40, ConfiguredShares: 40},
		{Name: "apf-batch", Object: "batch", Shares: 20, ConfiguredShares: 20, BorrowingLimitPercent: ptr(20)},
		{Name: "apf-reports", Object: "reports", Shares: 20, ConfiguredShares: 20},
	}
	recs := map[string]autopilot.Recommendation{
		"apf-web": {Level: levels[0], Shares: webTo, LendablePercent: 45, Why: "slack",
			Demand: autopilot.Demand{NominalSeats: 20, Seats: 8, Peak: 11, Dispatched: 9000}},
		"apf-batch": {Level: levels[1], Shares: batchTo, BorrowingLimitPercent: ptr(50), Why: "under pressure",
			Demand: autopilot.Demand{NominalSeats: 10, Seats: 19.25, Peak: 22, Rejected: 400, WaitP99: 1.5, WaitKnown: true}},
		"apf-reports": {Level: levels[2], Shares: 20, Why: "in the dead band",
			Demand: autopilot.Demand{NominalSeats: 10, Seats: 7.75, Peak: 8, WaitP99: 0.08, WaitKnown: true}},
	}
	return levels, recs
}

// TestBuildReportZeroSum checks that a recommendation keeping the pool's total is reported and
// one changing it is refused (it would change every other level's nominal seats).
func TestBuildReportZeroSum(t *testing.T) {
	levels, recs := handMade(30, 30)
	rep, err := buildReport(recs, levels, nil)
	if err != nil || rep.TotalShares != 80 || rep.changes() != 2 || rep.Rows[0].Object != "batch" {
		t.Fatalf("report %+v, %v: want total 80, 2 changes, rows by name", rep, err)
	}
	if rep.Rows[0].ProjectedSeats != 15 || rep.Rows[2].ProjectedSeats != 15 {
		t.Errorf("projected seats %v and %v, want 10x30/20 = 15 and 20x30/40 = 15", rep.Rows[0].ProjectedSeats, rep.Rows[2].ProjectedSeats)
	}
	levels, recs = handMade(30, 31)
	if _, err := buildReport(recs, levels, nil); err == nil || !strings.Contains(err.Error(), "from 80 to 81") {
		t.Errorf("total changed: %v, want a refusal naming 80 and 81", err)
	}
	delete(recs, "apf-web")
	if _, err := buildReport(recs, levels, nil); err == nil {
		t.Error("a level without recommendation: no error")
	}
}

// TestPatch checks the YAML patch: one partial RequestPriority per changed object, only the
// fields that change, after the comment naming its file and line.
func TestPatch(t *testing.T) {
	levels, recs := handMade(30, 30)
	rep, err := buildReport(recs, levels, map[string]location{"batch": {File: "git/levels.yaml", Line: 8}})
	if err != nil {
		t.Fatal(err)
	}
	patch, err := rep.patch()
	if err != nil {
		t.Fatal(err)
	}
	want := `# git/levels.yaml:8
apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: RequestPriority
metadata:
  name: batch
spec:
  assuredConcurrencyShares: 30
  borrowingLimitPercent: 50
---
apiVersion: flowcontrol.apf-operator.io/v1alpha1
kind: RequestPriority
metadata:
  name: web
spec:
  assuredConcurrencyShares: 30
  lendablePercent: 45
`
	if string(patch) != want {
		t.Errorf("patch:\n%s\nwant:\n%s", patch, want)
	}
	if !strings.Contains(rep.Rows[2].Why, "lendablePercent 0 -> 45") || !strings.Contains(rep.Rows[0].Why, "borrowingLimitPercent 20 -> 50") {
		t.Errorf("whys %q, %q: want the limit changes named", rep.Rows[2].Why, rep.Rows[0].Why)
	}
	levels, recs = handMade(20, 40)
	for name, r := range recs {
		r.LendablePercent, r.BorrowingLimitPercent = r.Level.LendablePercent, r.Level.BorrowingLimitPercent
		recs[name] = r
	}
	if rep, _ = buildReport(recs, levels, nil); rep.changes() != 0 {
		t.Errorf("nothing recommended, %d changes", rep.changes())
	}
	if patch, _ = rep.patch(); len(patch) != 0 {
		t.Errorf("nothing recommended, patch %q", patch)
	}
}

// TestTableCells checks a row's cells: arrows only for what changes, seats and waits formatted.
func TestTableCells(t *testing.T) {
	levels, recs := handMade(30, 30)
	rep, _ := buildReport(recs, levels, nil)
	var b bytes.Buffer
	if err := writeTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"batch", "20 -> 30", "10 -> 15", "19.2", "22", "400", "1.5s", "reports", "80ms",
		"2 RequestPriorities to change; total shares of the operator's levels unchanged (80)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestSavedZeroSum runs the recommender on the saved metrics of testdata, where it moves shares,
// and checks that the recommended shares add up to today's.
func TestSavedZeroSum(t *testing.T) {
	o := options{metricsFrom: []string{"testdata/from.metrics"}, metricsTo: []string{"testdata/to.metrics"},
		filenames: []string{"testdata/manifests"}, window: 5 * time.Minute}
	in, err := o.read(context.Background(), nil, genericiooptions.IOStreams{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := autopilot.DefaultConfig()
	recs := autopilot.Recommend(cfg, in.levels, autopilot.WindowFrom(cfg, in.prev, in.cur, names(in.levels)))
	var today, recommended int32
	moved := 0
	for _, l := range in.levels {
		today += l.Shares
		recommended += recs[l.Name].Shares
		if recs[l.Name].Shares != l.Shares {
			moved++
		}
	}
	if len(in.levels) != 3 || today != 80 || recommended != today || moved < 2 {
		t.Errorf("%d levels, total %d today, %d recommended, %d moved: want 3 levels of 80 shares, the same total, 2 moved",
			len(in.levels), today, recommended, moved)
	}
}
