package benchmark

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/apf-operator/apf-operator/internal/apf"
)

// TestImplementationsExecute: every implementation builds from the standard configurations
// and runs each admitted request's exec exactly once, so the benchmarks time real work.
func TestImplementationsExecute(t *testing.T) {
	for _, f := range Factories() {
		t.Run(f.Name, func(t *testing.T) {
			impl, err := f.New(StandardConfig(10))
			if err != nil {
				t.Fatalf("Building %s: %v", f.Name, err)
			}
			defer impl.Close()
			for _, p := range PrepareAll(impl, TenantRequests(20)) {
				runs := 0
				p.Handle(context.Background(), func() { runs++ })
				if runs != 1 {
					t.Fatalf("exec ran %d times, want 1", runs)
				}
			}
		})
	}
}

// TestConfigsAreEquivalent: ours and upstream send the same user to the same FlowSchema.
func TestConfigsAreEquivalent(t *testing.T) {
	cfg := StandardConfig(10)
	ours, up := bothEngines(t, cfg)
	for k, r := range TenantRequests(12) {
		want := "authenticated"
		if k < 9 {
			want = "user-" + r.User[len("tenant-"):]
		}
		var res apf.Result
		ours.engine.Classify(&ours.Prepare(r).(*oursRequest).attrs, &res)
		if res.Schema.Name != want {
			t.Errorf("ours: %s went to %q, want %q", r.User, res.Schema.Name, want)
		}
		if got := up.Prepare(r).(*upstreamRequest).classify(); got != want {
			t.Errorf("upstream: %s went to %q, want %q", r.User, got, want)
		}
	}
}

// TestBorrowingConfigIsEquivalent: in both engines user heavy goes to the borrower level's
// schema and a light user to the lender's, and ours gives each level the nominal 20 seats the
// scenario assumes, the lender keeping 10.
func TestBorrowingConfigIsEquivalent(t *testing.T) {
	cfg := BorrowingConfig()
	ours, up := bothEngines(t, cfg)
	for user, want := range map[string]string{heavyUser: "heavy", lightUser(3): "authenticated"} {
		r := Request{User: user, Groups: []string{AuthenticatedGroup}, Verb: "get", Resource: "pods", Namespace: "ns"}
		var res apf.Result
		ours.engine.Classify(&ours.Prepare(r).(*oursRequest).attrs, &res)
		if res.Schema.Name != want {
			t.Errorf("ours: %s went to %q, want %q", user, res.Schema.Name, want)
		}
		if got := up.Prepare(r).(*upstreamRequest).classify(); got != want {
			t.Errorf("upstream: %s went to %q, want %q", user, got, want)
		}
	}
	for _, l := range ours.engine.State().Levels {
		want := map[string][2]int{"borrower": {20, 20}, "lender": {20, 10}}[l.Name]
		if !l.Exempt && (l.AssuredConcurrency != want[0] || l.MinConcurrency != want[1]) {
			t.Errorf("ours: level %s has ACV %d, minCL %d; want %v", l.Name, l.AssuredConcurrency, l.MinConcurrency, want)
		}
	}
}

func TestMaxMinFair(t *testing.T) {
	for _, tc := range []struct {
		name     string
		demands  []float64
		capacity float64
		want     []float64
	}{
		{"light flows get their demand, heavy the rest", []float64{100, 0.2, 0.2}, 10, []float64{9.6, 0.2, 0.2}},
		{"all saturated share equally", []float64{100, 5, 5}, 9, []float64{3, 3, 3}},
		{"capacity beyond demand", []float64{1, 2}, 10, []float64{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MaxMinFair(tc.demands, tc.capacity)
			for i := range got {
				if math.Abs(got[i]-tc.want[i]) > 1e-9 {
					t.Fatalf("MaxMinFair(%v, %v) = %v, want %v", tc.demands, tc.capacity, got, tc.want)
				}
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	ds := make([]time.Duration, 200)
	for i := range ds {
		ds[i] = time.Duration(200-i) * time.Millisecond
	}
	if got := Percentile(ds, 0.99); got != 198*time.Millisecond {
		t.Errorf("p99 of 1..200 ms = %v, want 198ms", got)
	}
	if got := Percentile(nil, 0.99); got != 0 {
		t.Errorf("p99 of nothing = %v, want 0", got)
	}
}

// bothEngines builds this project's engine and upstream's from cfg; upstream's is closed when
// the test ends.
func bothEngines(t *testing.T, cfg Config) (*Ours, *Upstream) {
	t.Helper()
	ours, err := NewOurs(cfg)
	if err != nil {
		t.Fatalf("NewOurs: %v", err)
	}
	up, err := NewUpstream(cfg)
	if err != nil {
		t.Fatalf("NewUpstream: %v", err)
	}
	t.Cleanup(up.Close)
	return ours, up
}
