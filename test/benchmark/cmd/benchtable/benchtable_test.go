package main

import (
	"bytes"
	"strings"
	"testing"
)

// sample is `go test -bench` output in the shape of test/benchmark's, with -count 2 for one
// case, a failed benchmark and test chatter around it.
const sample = `goos: linux
goarch: amd64
pkg: github.com/apf-operator/apf-operator/test/benchmark
cpu: AMD EPYC
clocksource: kvm-clock
BenchmarkUncontended/impl=ours/schemas=10/flows=1000-2         	 1000000	       400.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkUncontended/impl=ours/schemas=10/flows=1000-2         	 1000000	       600.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkUncontended/impl=upstream/schemas=10/flows=1000-2     	   50000	     20000 ns/op	    2456 B/op	      56 allocs/op
BenchmarkUncontended/impl=semaphore/schemas=10/flows=1000-2    	10000000	       100.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkUncontended/impl=semaphore/schemas=10/flows=1000-2    	10000000	       250.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkUncontended/impl=ours/schemas=1000/flows=1000-2       	 1000000	      1500 ns/op	       0 B/op	       0 allocs/op
BenchmarkUncontended/impl=upstream/schemas=1000/flows=1000-2   	   30000	     40000 ns/op	    2900 B/op	      61 allocs/op
BenchmarkContended/impl=ours/schemas=10/flows=1000/goroutines=256-2    	 1000000	      1000 ns/op	   1000000 req/s	       0 B/op	       0 allocs/op
BenchmarkContended/impl=upstream/schemas=10/flows=1000/goroutines=256-2 	   40000	     30000 ns/op	     33000 req/s	    2500 B/op	      56 allocs/op
--- FAIL: BenchmarkFairness/impl=ours/heavy=100/light=50/seats=20
    bench_test.go:150: Building ours: boom
BenchmarkFairness/impl=upstream/heavy=100/light=50/seats=20-2     	       1	3000000000 ns/op	         0.02500 fairness-err	        10.00 light-p99-ms	     9999 B/op	       9 allocs/op
BenchmarkOther-2    	 100	 5 ns/op
PASS
ok  	github.com/apf-operator/apf-operator/test/benchmark	60.0s
`

func TestParseFilesResultsUnderCases(t *testing.T) {
	res, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	var names []string
	for _, c := range res.Cases {
		names = append(names, c.Bench+"|"+c.Config)
	}
	want := "Uncontended|schemas=10/flows=1000 Uncontended|schemas=1000/flows=1000 " +
		"Contended|schemas=10/flows=1000/goroutines=256 Fairness|heavy=100/light=50/seats=20"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("cases = %q, want %q (results without impl= are ignored)", got, want)
	}
	c := res.Find("Uncontended", "schemas=10/flows=1000")
	for _, tc := range []struct {
		impl, unit string
		want       float64
	}{
		{implOurs, "ns/op", 500}, // median of 400 and 600, in the unit go test printed
		{implUpstream, "ns/op", 20000},
		{implUpstream, "allocs/op", 56},
		{implSemaphore, "B/op", 0},
	} {
		if got, ok := c.Value(tc.impl, tc.unit); !ok || got != tc.want {
			t.Errorf("%s %s = %v (present %v), want %v", tc.impl, tc.unit, got, ok, tc.want)
		}
	}
	if got, ok := res.Find("Fairness", "heavy=100/light=50/seats=20").Value(implUpstream, "fairness-err"); !ok || got != 0.025 {
		t.Errorf("upstream fairness-err = %v (present %v), want 0.025", got, ok)
	}
}

func TestParseFailsOnNoResults(t *testing.T) {
	for _, in := range []string{"", "FAIL\tgithub.com/x [build failed]\n", "BenchmarkNoImpl-2  10  5 ns/op\n"} {
		if _, err := Parse(strings.NewReader(in)); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", in)
		}
	}
}

func TestRenderPrintsRatiosAndGoals(t *testing.T) {
	res, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	var out bytes.Buffer
	if err := Render(&out, res); err != nil {
		t.Fatalf("Render: %v", err)
	}
	text := out.String()
	for _, want := range []string{
		"| Uncontended schemas=10 flows=1000 | ns/op | 500 | 20,000 | 175 | 0.025x | 2.86x | <= 0.5x upstream: met; <= 2x semaphore: NOT MET |",
		"|  | allocs/op | 0 | 56 | 0 | 0x | 1x | <= 0: met |",
		"|  | req/s | 1,000,000 | 33,000 | - | 30.3x | - | >= 100x upstream: NOT MET |",
		"| Fairness heavy=100 light=50 seats=20 | fairness-err | - | 0.025 | - | - | - | <= 0.01: NO DATA |",
		"| Classification schemas=1000 vs 10 flows=1000 | ns/op per added FlowSchema | 1.01 | 20.2 | - | - | - | <= 1 (sublinear): NOT MET |",
		"|  | ns/op ratio | 3x | 2x | - | - | - |  |",
		"Goals met: 5 of 10.",
		"Machine: cpu AMD EPYC; clocksource kvm-clock.",
		"median of 2 run(s)",
		"Uncontended ours/semaphore ns/op in each run:\n- schemas=10 flows=1000: 4x, 2.4x (0 of 2 runs <= 2x)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q; output:\n%s", want, text)
		}
	}
	if strings.Contains(text, "3,000,000,000") {
		t.Errorf("output shows a scenario's ns/op, which times the whole scenario:\n%s", text)
	}
}
