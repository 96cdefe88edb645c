package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// Implementation names, as the impl= part of benchmark names.
const (
	implOurs      = "ours"
	implUpstream  = "upstream"
	implSemaphore = "semaphore"
)

// Case is one benchmark configuration measured for one or more implementations, e.g.
// Bench "Uncontended" with Config "schemas=10/flows=1000".
type Case struct {
	Bench  string
	Config string
	// samples holds every value read, by implementation and unit.
	samples map[string]map[string][]float64
	// unitOrder lists the units in the order first read.
	unitOrder []string
}

// Name is the case as the table shows it.
func (c *Case) Name() string {
	if c.Config == "" {
		return c.Bench
	}
	return c.Bench + " " + strings.ReplaceAll(c.Config, "/", " ")
}

// Value returns the median of the samples of impl in unit.
func (c *Case) Value(impl, unit string) (float64, bool) {
	s := c.samples[impl][unit]
	if len(s) == 0 {
		return 0, false
	}
	s = slices.Sorted(slices.Values(s))
	if len(s)%2 == 1 {
		return s[len(s)/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}

// Samples returns the samples of impl in unit, in the order read.
func (c *Case) Samples(impl, unit string) []float64 { return c.samples[impl][unit] }

// Units returns the units measured for the case, in first-seen order.
func (c *Case) Units() []string { return c.unitOrder }

func (c *Case) add(impl, unit string, v float64) {
	if c.samples[impl] == nil {
		c.samples[impl] = map[string][]float64{}
	}
	if !slices.Contains(c.unitOrder, unit) {
		c.unitOrder = append(c.unitOrder, unit)
	}
	c.samples[impl][unit] = append(c.samples[impl][unit], v)
}

// Results are the cases read, in first-seen order.
type Results struct {
	Cases []*Case
	// Machine holds the values of the configuration lines that describe the machine ("cpu",
	// "clocksource"), each value once, in the order read.
	Machine map[string][]string
	byName  map[string]*Case
}

// machineKeys are the configuration lines Results.Machine keeps.
var machineKeys = []string{"cpu", "clocksource"}

// Find returns the case of bench and config, or nil.
func (r *Results) Find(bench, config string) *Case { return r.byName[bench+"/"+config] }

func (r *Results) caseFor(bench, config string) *Case {
	if c := r.Find(bench, config); c != nil {
		return c
	}
	c := &Case{Bench: bench, Config: config, samples: map[string]map[string][]float64{}}
	r.Cases = append(r.Cases, c)
	r.byName[bench+"/"+config] = c
	return c
}

// Parse reads `go test -bench` output. Results whose name has no impl= part are ignored; lines
// that are not benchmark results (test output, PASS, ok ...) are skipped. It fails when no
// result of an implementation was read.
func Parse(in io.Reader) (*Results, error) {
	res := &Results{byName: map[string]*Case{}, Machine: map[string][]string{}}
	reader := benchfmt.NewReader(in, "stdin")
	for reader.Scan() {
		switch rec := reader.Result().(type) {
		case *benchfmt.SyntaxError:
			fmt.Fprintf(os.Stderr, "benchtable: skipping %v\n", rec)
		case *benchfmt.Result:
			res.add(rec)
			res.noteMachine(rec)
		}
	}
	if err := reader.Err(); err != nil {
		return nil, fmt.Errorf("reading benchmark output: %w", err)
	}
	if len(res.Cases) == 0 {
		return nil, errors.New("no benchmark results with an impl= part in the input; " +
			"did `go test -bench` fail or match no benchmark?")
	}
	return res, nil
}

// noteMachine records the machine's configuration lines in force for rec.
func (r *Results) noteMachine(rec *benchfmt.Result) {
	for _, key := range machineKeys {
		v := strings.TrimSpace(rec.GetConfig(key))
		if v != "" && !slices.Contains(r.Machine[key], v) {
			r.Machine[key] = append(r.Machine[key], v)
		}
	}
}

// add files one result under its case. The name BenchmarkX/impl=I/k1=v1/k2=v2-P gives bench X,
// implementation I and config k1=v1/k2=v2.
func (r *Results) add(rec *benchfmt.Result) {
	base, parts := rec.Name.Parts()
	bench := strings.TrimPrefix(string(base), "Benchmark")
	impl := ""
	var config []string
	for _, p := range parts {
		s := string(p)
		if !strings.HasPrefix(s, "/") {
			continue // -GOMAXPROCS
		}
		s = s[1:]
		if v, ok := strings.CutPrefix(s, "impl="); ok {
			impl = v
			continue
		}
		config = append(config, s)
	}
	if impl == "" {
		return
	}
	c := r.caseFor(bench, strings.Join(config, "/"))
	for _, v := range rec.Values {
		unit, value := v.Unit, v.Value
		if v.OrigUnit != "" { // benchfmt tidies ns/op into sec/op; show what go test printed
			unit, value = v.OrigUnit, v.OrigValue
		}
		c.add(impl, unit, value)
	}
}
