package alerts

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
)

// alertHolds is each alert's for: as docs/fleet.md and the alerts' descriptions state it: a
// rule file whose for: differs (or is gone) fails TestAlertsHoldForTheirDuration.
var alertHolds = map[string]time.Duration{
	"ApfOperatorObjectsNotReady":       10 * time.Minute,
	"ApfOperatorProjectionFailed":      10 * time.Minute,
	"ApfOperatorProjectionWriteErrors": 10 * time.Minute,
	"ApfOperatorWebhookErrors":         10 * time.Minute,
	"ApfOperatorWebhookSlow":           15 * time.Minute,
	"ApfOperatorNativeRejections":      10 * time.Minute,
	"ApfOperatorFilterRejections":      10 * time.Minute,
	"ApfOperatorEventRejections":       15 * time.Minute,
	"ApfOperatorConfigDrift":           30 * time.Minute,
	"ApfOperatorConfigurationsDiverge": 2 * time.Hour,
}

// evaluationInterval is the rule group's evaluation interval in these tests.
const evaluationInterval = time.Minute

// TestAlertsHoldForTheirDuration evaluates every alert rule of the chart as Prometheus's rule
// manager does (package rules, its for: included), once a minute over each case's series: in
// a case that fires, the alert goes pending when its expression first holds, does not fire
// before its for: has elapsed, and fires then, with the case's labels; in a silent case it
// never fires.
func TestAlertsHoldForTheirDuration(t *testing.T) {
	for name, rule := range loadRules(t) {
		hold := time.Duration(rule.For)
		if want, ok := alertHolds[name]; !ok || hold != want {
			t.Errorf("alert %s holds for %v; want %v (alertHolds)", name, hold, want)
			continue
		}
		for _, c := range alertCases[name] {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				states := evaluate(t, name, rule.Expr, hold, rule.Labels, rule.Annotations, c)
				if c.fires == nil {
					if at, ok := states.firstFiring(); ok {
						t.Fatalf("fired at %v in a situation where it must stay silent", at)
					}
					return
				}
				checkHold(t, states, hold, expectedLabels(t, c.fires))
			})
		}
	}
}

// step is the alert's state after one evaluation.
type step struct {
	at      time.Duration // since the series' start
	pending []labels.Labels
	firing  []labels.Labels
}

type timeline []step

func (tl timeline) firstFiring() (time.Duration, bool) {
	for _, s := range tl {
		if len(s.firing) > 0 {
			return s.at, true
		}
	}
	return 0, false
}

// evaluate runs the alert rule over the case's series every evaluationInterval from the
// series' start to 15 minutes past hold, and returns its state at each evaluation.
func evaluate(t *testing.T, name, expr string, hold time.Duration, lbls, annotations map[string]string, c alertCase) timeline {
	t.Helper()
	storage := promqltest.LoadedStorage(t, loadScript(c))
	t.Cleanup(func() { _ = storage.Close() })
	engine := promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery)
	vector, err := parser.ParseExpr(expr)
	if err != nil {
		t.Fatal(err)
	}
	rule := rules.NewAlertingRule(name, vector, hold, 0, labels.FromMap(lbls), labels.FromMap(annotations),
		labels.EmptyLabels(), "", true, promslog.NewNopLogger())
	query := rules.EngineQueryFunc(engine, storage)
	var tl timeline
	for at := time.Duration(0); at <= hold+15*time.Minute; at += evaluationInterval {
		if _, err := rule.Eval(context.Background(), 0, time.Unix(0, 0).Add(at), query, nil, 0); err != nil {
			t.Fatalf("evaluating at %v: %v", at, err)
		}
		s := step{at: at}
		for _, a := range rule.ActiveAlerts() {
			a.Annotations.Range(func(v labels.Label) {
				if strings.Contains(v.Value, "error expanding template") {
					t.Errorf("at %v, annotation %s: %s", at, v.Name, v.Value)
				}
			})
			switch a.State {
			case rules.StatePending:
				s.pending = append(s.pending, a.Labels)
			case rules.StateFiring:
				s.firing = append(s.firing, a.Labels)
			}
		}
		tl = append(tl, s)
	}
	return tl
}

// checkHold checks a firing case: pending from the first evaluation where the expression
// holds, silent until hold has passed, then firing for exactly the expected label sets.
func checkHold(t *testing.T, tl timeline, hold time.Duration, want []labels.Labels) {
	t.Helper()
	pendingAt := time.Duration(-1)
	for _, s := range tl {
		if pendingAt < 0 && len(s.pending) > 0 {
			pendingAt = s.at
		}
		if len(s.firing) == 0 {
			continue
		}
		if pendingAt < 0 {
			t.Fatalf("fired at %v without having been pending", s.at)
		}
		if s.at-pendingAt < hold {
			t.Fatalf("fired at %v, pending since %v: before its for: of %v elapsed", s.at, pendingAt, hold)
		}
	}
	if pendingAt < 0 {
		t.Fatal("never pending")
	}
	firingAt := pendingAt + hold
	for _, s := range tl {
		if s.at != firingAt {
			continue
		}
		if len(s.pending) > 0 || !sameLabelSets(s.firing, want) {
			t.Fatalf("at %v (pending since %v, for: %v): firing %v, still pending %v; want firing %v",
				s.at, pendingAt, hold, s.firing, s.pending, want)
		}
		return
	}
	t.Fatalf("pending since %v: the evaluations end before its for: of %v elapsed", pendingAt, hold)
}

// expectedLabels are the alerts' label sets a case expects: the expression's result series
// (promqltest's expected-result syntax) with the alert's name and the rule's labels left out.
func expectedLabels(t *testing.T, fires []string) []labels.Labels {
	t.Helper()
	var out []labels.Labels
	for _, f := range fires {
		series := f[:strings.LastIndex(f, " ")]
		l, err := parser.ParseMetric(series)
		if err != nil {
			t.Fatalf("expected result %q: %v", f, err)
		}
		out = append(out, l)
	}
	return out
}

// sameLabelSets reports whether the firing alerts are exactly the expected ones, comparing
// the labels the expression gave them (alertname and the rule's labels left out).
func sameLabelSets(firing, want []labels.Labels) bool {
	if len(firing) != len(want) {
		return false
	}
	seen := map[string]bool{}
	for _, l := range firing {
		seen[labels.NewBuilder(l).Del(model.AlertNameLabel, "severity").Labels().String()] = true
	}
	for _, l := range want {
		if !seen[l.String()] {
			return false
		}
	}
	return true
}
