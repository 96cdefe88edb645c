package sim

import (
	"flag"
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
	results, err := RunAll(Scenarios(), cfg)
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
// levels' nominal seats; the closed loop rejects no more than the static configuration.
func checkScenario(t *testing.T, sr ScenarioResults) {
	t.Helper()
	var static, loop *Result
	for _, r := range sr.Runs {
		if !r.PoolSumKept || !r.OtherSeatsKept {
			t.Errorf("%s, %s: pool sum kept %v, other levels' seats kept %v", sr.Scenario.Name, r.Policy, r.PoolSumKept, r.OtherSeatsKept)
		}
		switch r.Policy {
		case Static:
			static = r
			if r.Steps != 0 {
				t.Errorf("%s: the static policy made %d steps", sr.Scenario.Name, r.Steps)
			}
		case ClosedLoop:
			loop = r
		}
	}
	if static == nil || loop == nil {
		t.Fatalf("%s: missing runs", sr.Scenario.Name)
	}
	l, s := loop.TotalRejected(false), static.TotalRejected(false)
	why, known := knownWorse[sr.Scenario.Name]
	switch {
	case l > s && !known:
		t.Errorf("%s: the closed loop rejected %d requests, more than the static configuration's %d", sr.Scenario.Name, l, s)
	case l <= s && known:
		t.Errorf("%s: the closed loop rejected %d requests, no more than the static configuration's %d: remove the scenario from knownWorse and the docs' note (%s)",
			sr.Scenario.Name, l, s, why)
	}
}

// knownWorse lists the scenarios where the closed loop, with DefaultConfig, rejects more
// than the static configuration, and why (docs/autopilot-simulation.md says so too). The
// check fails as soon as a scenario no longer does, so that the exception goes.
var knownWorse = map[string]string{}

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
