package sim

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/internal/autopilot"
)

var (
	update    = flag.Bool("update", false, "rewrite the table in docs/autopilot-simulation.md")
	looptrace = flag.String("looptrace", "", "log the closed loop's decision at every window of this scenario")
	minChange = flag.Float64("min-change-percent", -1, "run with this Config.MinChangePercent instead of the default: "+
		"logs the table, compares and checks nothing")
)

const (
	docPath   = "../../../docs/autopilot-simulation.md"
	beginMark = "<!-- sim:begin -->\n"
	endMark   = "<!-- sim:end -->"
)

// TestSimulationTable regenerates the simulator's table and compares it with the one in the
// docs (-update rewrites it), then checks what the table must show.
func TestSimulationTable(t *testing.T) {
	cfg := autopilot.DefaultConfig()
	if *minChange >= 0 {
		cfg.MinChangePercent = *minChange
	}
	results, err := RunAll(AllScenarios(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	table := Table(results)
	t.Logf("\n%s", table)
	if *minChange >= 0 {
		return // an experiment, not the documented configuration
	}
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), beginMark)
	_, after, ok2 := strings.Cut(rest, endMark)
	if !ok1 || !ok2 {
		t.Fatalf("%s: no %q ... %q markers", docPath, beginMark, endMark)
	}
	if *update {
		if err := os.WriteFile(docPath, []byte(before+beginMark+table+endMark+after), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if got := rest[:len(rest)-len(endMark)-len(after)]; got != table {
		t.Errorf("the table in %s is stale: run `make sim` (go test ./internal/autopilot/sim -run TestSimulationTable -update)\nwant:\n%s\nhave:\n%s", docPath, table, got)
	}
	for _, sr := range results {
		checkScenario(t, sr)
		if sr.Scenario.Name == *looptrace {
			for _, line := range sr.Runs[len(sr.Runs)-1].Trace {
				t.Log(line)
			}
		}
	}
}

// checkScenario checks one scenario's runs: every policy keeps the pool's sum and the other
// levels' nominal seats; the closed loop meets the criterion against static + borrowing.
func checkScenario(t *testing.T, sr ScenarioResults) {
	t.Helper()
	runs := map[Policy]*Result{}
	for _, r := range sr.Runs {
		runs[r.Policy] = r
		if !r.PoolSumKept || !r.OtherSeatsKept {
			t.Errorf("%s, %s: pool sum kept %v, other levels' seats kept %v", sr.Scenario.Name, r.Policy, r.PoolSumKept, r.OtherSeatsKept)
		}
		if (r.Policy == Static || r.Policy == StaticBorrowing) && r.Steps != 0 {
			t.Errorf("%s: the %s policy made %d steps", sr.Scenario.Name, r.Policy, r.Steps)
		}
	}
	borrowing, loop := runs[StaticBorrowing], runs[ClosedLoop]
	if borrowing == nil || loop == nil {
		t.Fatalf("%s: missing runs", sr.Scenario.Name)
	}
	for _, problem := range worseThan(loop, borrowing) {
		t.Errorf("%s: the closed loop is worse than static + borrowing: %s", sr.Scenario.Name, problem)
	}
}

// Issue #34's criterion: the shipped loop, with borrowing on, may reject at most
// poolTolerance more than static + borrowing in the pool, and tenantTolerance more at any
// one pool level (fractions of static + borrowing's rejections).
const (
	poolTolerance   = 0.10
	tenantTolerance = 0.25
)

// worseThan lists where the run r breaks the criterion against the baseline.
func worseThan(r, baseline *Result) []string {
	var out []string
	if got, base := r.TotalRejected(true), baseline.TotalRejected(true); float64(got) > (1+poolTolerance)*float64(base) {
		out = append(out, fmt.Sprintf("%d rejected in the pool, more than %.0f%% above %d", got, 100*poolTolerance, base))
	}
	for i, l := range r.Levels {
		base := baseline.Levels[i]
		if l.Pool && float64(l.Rejected) > (1+tenantTolerance)*float64(base.Rejected) {
			out = append(out, fmt.Sprintf("%s rejected %d, more than %.0f%% above %d", l.Name, l.Rejected, 100*tenantTolerance, base.Rejected))
		}
	}
	return out
}

// TestCriterionCatchesWorse checks that worseThan fails a run that is worse, so that the
// table's check can fail.
func TestCriterionCatchesWorse(t *testing.T) {
	base := &Result{Levels: []LevelResult{{Name: "a", Pool: true, Rejected: 100}, {Name: "b", Pool: true, Rejected: 100}, {Name: "x", Rejected: 500}}}
	same := &Result{Levels: []LevelResult{{Name: "a", Pool: true, Rejected: 105}, {Name: "b", Pool: true, Rejected: 104}, {Name: "x", Rejected: 900}}}
	if p := worseThan(same, base); len(p) != 0 {
		t.Errorf("within the tolerances, yet: %v", p)
	}
	tenant := &Result{Levels: []LevelResult{{Name: "a", Pool: true, Rejected: 70}, {Name: "b", Pool: true, Rejected: 130}}}
	if p := worseThan(tenant, base); len(p) != 1 || !strings.Contains(p[0], "b rejected 130") {
		t.Errorf("a tenant 30%% worse: %v", p)
	}
	pool := &Result{Levels: []LevelResult{{Name: "a", Pool: true, Rejected: 120}, {Name: "b", Pool: true, Rejected: 120}}}
	if p := worseThan(pool, base); len(p) != 1 || !strings.Contains(p[0], "in the pool") {
		t.Errorf("a pool 20%% worse: %v", p)
	}
}

// TestDeterministic runs one scenario's closed loop twice: the same seed gives the same result.
func TestDeterministic(t *testing.T) {
	sc := Scenarios()[2]
	a, err := Run(&sc, ClosedLoop, autopilot.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(&sc, ClosedLoop, autopilot.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs of %s differ:\n%+v\n%+v", sc.Name, a, b)
	}
	if a.Steps == 0 {
		t.Fatalf("%s: the closed loop made no step; the determinism check would prove little", sc.Name)
	}
}
