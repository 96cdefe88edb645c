package sim

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/apf-operator/apf-operator/internal/autopilot"
)

// ScenarioResults are one scenario's runs, one per policy in Policies' order.
type ScenarioResults struct {
	Scenario Scenario
	Runs     []*Result
}

// RunAll runs every scenario under every policy with cfg, the scenarios concurrently (each
// run is deterministic on its own, so the concurrency changes nothing in the results).
func RunAll(scenarios []Scenario, cfg autopilot.Config) ([]ScenarioResults, error) {
	out := make([]ScenarioResults, len(scenarios))
	errs := make([]error, len(scenarios))
	var wg sync.WaitGroup
	for i := range scenarios {
		out[i].Scenario = scenarios[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range Policies {
				res, err := Run(&out[i].Scenario, p, cfg)
				if err != nil {
					errs[i] = err
					return
				}
				out[i].Runs = append(out[i].Runs, res)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Table renders the results as the Markdown of docs/autopilot-simulation.md: one table per
// scenario, a column per policy.
func Table(results []ScenarioResults) string {
	var b strings.Builder
	for i, sr := range results {
		if i > 0 {
			b.WriteString("\n")
		}
		writeScenario(&b, sr)
	}
	return b.String()
}

func writeScenario(b *strings.Builder, sr ScenarioResults) {
	sc := sr.Scenario
	fmt.Fprintf(b, "#### %s (seed %d)\n\n%s.\n\n", sc.Name, sc.Seed, capitalise(sc.Description))
	b.WriteString("| level (nominal seats at start) |")
	for _, r := range sr.Runs {
		fmt.Fprintf(b, " %s |", r.Policy)
	}
	b.WriteString("\n|---|")
	for range sr.Runs {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	first := sr.Runs[0]
	for li, l := range first.Levels {
		pool := ""
		if l.Pool {
			pool = ", pool"
		}
		fmt.Fprintf(b, "| %s (%d%s) |", l.Name, first.initialSeats[li], pool)
		for _, r := range sr.Runs {
			lr := r.Levels[li]
			fmt.Fprintf(b, " %d rejected, p99 wait %s |", lr.Rejected, seconds(lr.WaitP99))
		}
		b.WriteString("\n")
	}
	row(b, "rejected in the pool / in all", sr.Runs, func(r *Result) string {
		return fmt.Sprintf("%d / %d", r.TotalRejected(true), r.TotalRejected(false))
	})
	row(b, "pool shares at the end ("+strings.Join(poolNames(first), " / ")+")", sr.Runs, func(r *Result) string {
		var s []string
		for _, l := range r.Levels {
			if l.Pool {
				s = append(s, fmt.Sprint(l.FinalShares))
			}
		}
		return strings.Join(s, " / ")
	})
	row(b, "share changes: steps (shares moved, rollbacks)", sr.Runs, func(r *Result) string {
		return fmt.Sprintf("%d (%d, %d)", r.Steps, r.SharesMoved, r.Rollbacks)
	})
	row(b, "pool's sum of shares kept", sr.Runs, func(r *Result) string { return yesNo(r.PoolSumKept) })
	row(b, "other levels' nominal seats unchanged", sr.Runs, func(r *Result) string { return yesNo(r.OtherSeatsKept) })
}

func row(b *strings.Builder, label string, runs []*Result, cell func(*Result) string) {
	fmt.Fprintf(b, "| %s |", label)
	for _, r := range runs {
		fmt.Fprintf(b, " %s |", cell(r))
	}
	b.WriteString("\n")
}

func poolNames(r *Result) []string {
	var out []string
	for _, l := range r.Levels {
		if l.Pool {
			out = append(out, l.Name)
		}
	}
	return out
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
