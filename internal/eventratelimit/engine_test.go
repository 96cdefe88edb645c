package eventratelimit

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// seedExample is the seed's worked example: server {qps 100, burst 1000} and namespace
// {qps 10, burst 100, cacheSize 50}.
func seedExample() Config {
	return Config{Name: "example", Generation: 1, Spec: v1alpha1.EventRateLimitSpec{Limits: []v1alpha1.EventRateLimitLimit{
		{Type: v1alpha1.EventRateLimitServer, QPS: 100, Burst: 1000},
		{Type: v1alpha1.EventRateLimitNamespace, QPS: 10, Burst: 100, CacheSize: ptr.To[int32](50)},
	}}}
}

func limitOf(t v1alpha1.EventRateLimitType, qps, burst int32, cache int32) Config {
	return Config{Name: string(t), Generation: 1, Spec: v1alpha1.EventRateLimitSpec{Limits: []v1alpha1.EventRateLimitLimit{
		{Type: t, QPS: qps, Burst: burst, CacheSize: ptr.To(cache)},
	}}}
}

// admitN sends n events with attributes a and returns how many were admitted.
func admitN(e *Engine, a Attributes, n int) int {
	admitted := 0
	for range n {
		if e.Admit(&a).Allowed {
			admitted++
		}
	}
	return admitted
}

// TestSeedServerExample: 1500 events at t are 1000 admitted, 500 rejected; at t+1s 100 of 500.
func TestSeedServerExample(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	e := New(clk, nil)
	e.Update([]Config{limitOf(v1alpha1.EventRateLimitServer, 100, 1000, 0)})
	if got := admitN(e, Attributes{Namespace: "a"}, 1500); got != 1000 {
		t.Fatalf("at t: admitted %d of 1500, want 1000", got)
	}
	clk.SetTime(t0.Add(time.Second))
	if got := admitN(e, Attributes{Namespace: "a"}, 500); got != 100 {
		t.Fatalf("at t+1s: admitted %d of 500, want 100", got)
	}
}

// TestSeedNamespaceExample is the scenario on the engine: 150 events in one namespace
// admit 100; another namespace is still admitted; a second later 10 more are.
func TestSeedNamespaceExample(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	e := New(clk, nil)
	e.Update([]Config{seedExample()})
	if got := admitN(e, Attributes{Namespace: "a"}, 150); got != 100 {
		t.Fatalf("admitted %d of 150 in namespace a, want 100", got)
	}
	if got := admitN(e, Attributes{Namespace: "b"}, 1); got != 1 {
		t.Fatal("namespace b must still be admitted")
	}
	clk.SetTime(t0.Add(time.Second))
	if got := admitN(e, Attributes{Namespace: "a"}, 20); got != 10 {
		t.Fatalf("a second later: admitted %d of 20, want 10", got)
	}
	c, _ := e.Counts("example")
	if c.Accepted != 111 || c.Rejected != 60 {
		t.Fatalf("counts %+v, want 111 accepted, 60 rejected", c)
	}
}

// TestRejectedStillCharges: an event the server bucket rejects still takes a token from its
// namespace bucket, and vice versa (the seed: "An event request rejected by the server-side
// allowance will still count against the per-namespace allowance, and vice versa").
func TestRejectedStillCharges(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	e := New(clk, nil)
	e.Update([]Config{{Name: "x", Generation: 1, Spec: v1alpha1.EventRateLimitSpec{Limits: []v1alpha1.EventRateLimitLimit{
		{Type: v1alpha1.EventRateLimitServer, QPS: 1, Burst: 5},
		{Type: v1alpha1.EventRateLimitNamespace, QPS: 1, Burst: 8},
	}}}})
	// 5 admitted in a; 3 more rejected by the server bucket but charged to a's bucket (8 of 8).
	if got := admitN(e, Attributes{Namespace: "a"}, 8); got != 5 {
		t.Fatalf("admitted %d, want 5", got)
	}
	// One second: server +1, a +1. Had the 3 rejections not been charged, a would hold 4.
	clk.SetTime(t0.Add(time.Second))
	if got := admitN(e, Attributes{Namespace: "a"}, 1); got != 1 {
		t.Fatal("a must have exactly one refilled token")
	}
	// The server bucket is empty again; namespace b is rejected by it, yet b's bucket is charged.
	if got := admitN(e, Attributes{Namespace: "b"}, 3); got != 0 {
		t.Fatalf("b admitted %d, want 0 (server empty)", got)
	}
	clk.SetTime(t0.Add(2 * time.Second)) // server +1
	clk2 := e.BucketCount("x", v1alpha1.EventRateLimitNamespace)
	if clk2 != 2 {
		t.Fatalf("namespace buckets %d, want 2", clk2)
	}
	if got := admitN(e, Attributes{Namespace: "a"}, 2); got != 1 {
		t.Fatalf("a admitted %d after the server refilled one token, want 1", got)
	}
}

// TestEvictionRestoresAllowance: with cacheSize 2, a third key evicts the least recently used,
// which then starts again with a full bucket.
func TestEvictionRestoresAllowance(t *testing.T) {
	e := New(clocktesting.NewFakePassiveClock(t0), nil)
	e.Update([]Config{limitOf(v1alpha1.EventRateLimitUser, 1, 3, 2)})
	for _, u := range []string{"alice", "bob"} {
		if got := admitN(e, Attributes{User: u}, 4); got != 3 {
			t.Fatalf("%s admitted %d of 4, want 3", u, got)
		}
	}
	if got := admitN(e, Attributes{User: "bob"}, 1); got != 0 {
		t.Fatal("bob's bucket must be empty")
	}
	admitN(e, Attributes{User: "carol"}, 1) // evicts alice (least recently used)
	if n := e.BucketCount(string(v1alpha1.EventRateLimitUser), v1alpha1.EventRateLimitUser); n != 2 {
		t.Fatalf("%d user buckets, want cacheSize 2", n)
	}
	if got := admitN(e, Attributes{User: "alice"}, 4); got != 3 {
		t.Fatalf("evicted alice admitted %d of 4, want a full burst of 3", got)
	}
}

// TestRetryAfter: a rejection says how long until the rejecting bucket holds a token.
func TestRetryAfter(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	e := New(clk, nil)
	e.Update([]Config{limitOf(v1alpha1.EventRateLimitNamespace, 4, 1, 0), limitOf(v1alpha1.EventRateLimitServer, 1, 1, 0)})
	if !e.Admit(&Attributes{Namespace: "a"}).Allowed {
		t.Fatal("first event must be admitted")
	}
	d := e.Admit(&Attributes{Namespace: "a"})
	if d.Allowed || d.RetryAfter != time.Second || d.RejectedBy != string(v1alpha1.EventRateLimitNamespace) {
		t.Fatalf("decision %+v, want rejected by Namespace with RetryAfter 1s (the slower server bucket)", d)
	}
	clk.SetTime(t0.Add(250 * time.Millisecond))
	d = e.Admit(&Attributes{Namespace: "b"}) // b's bucket full; server still short by 0.75 token
	if d.Allowed || d.RetryAfter != 750*time.Millisecond || d.RejectedBy != string(v1alpha1.EventRateLimitServer) {
		t.Fatalf("decision %+v, want rejected by Server with RetryAfter 750ms", d)
	}
}

// TestUpdateKeepsUnchangedBuckets: re-applying the same generation keeps the buckets; a new
// generation starts full; a removed object stops limiting.
func TestUpdateKeepsUnchangedBuckets(t *testing.T) {
	e := New(clocktesting.NewFakePassiveClock(t0), nil)
	c := limitOf(v1alpha1.EventRateLimitServer, 1, 2, 0)
	e.Update([]Config{c})
	admitN(e, Attributes{}, 2)
	e.Update([]Config{c})
	if admitN(e, Attributes{}, 1) != 0 {
		t.Fatal("same generation must keep the empty bucket")
	}
	c.Generation = 2
	e.Update([]Config{c})
	if admitN(e, Attributes{}, 3) != 2 {
		t.Fatal("a new generation must start with a full bucket of 2")
	}
	e.Update(nil)
	if admitN(e, Attributes{}, 10) != 10 {
		t.Fatal("without objects nothing is limited")
	}
}

// TestSetReplicasDivides: with 4 replicas each holds a quarter of qps and burst.
func TestSetReplicasDivides(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	e := New(clk, nil)
	e.Update([]Config{limitOf(v1alpha1.EventRateLimitServer, 100, 1000, 0)})
	e.SetReplicas(4)
	if got := admitN(e, Attributes{}, 300); got != 250 {
		t.Fatalf("admitted %d, want burst 1000/4 = 250", got)
	}
	clk.SetTime(t0.Add(time.Second))
	if got := admitN(e, Attributes{}, 100); got != 25 {
		t.Fatalf("admitted %d a second later, want qps 100/4 = 25", got)
	}
	if c, _ := e.Counts(string(v1alpha1.EventRateLimitServer)); c.Accepted != 275 || c.Rejected != 125 {
		t.Fatalf("counts %+v", c)
	}
}

// TestSeveralObjectsAllEnforced: an event must fit every object, and each object's buckets are
// charged whatever the others decide.
func TestSeveralObjectsAllEnforced(t *testing.T) {
	e := New(clocktesting.NewFakePassiveClock(t0), nil)
	e.Update([]Config{limitOf(v1alpha1.EventRateLimitServer, 1, 10, 0), limitOf(v1alpha1.EventRateLimitNamespace, 1, 3, 0)})
	if got := admitN(e, Attributes{Namespace: "a"}, 5); got != 3 {
		t.Fatalf("admitted %d, want 3 (the tighter object)", got)
	}
	// In b the server object has 5 tokens left and b's bucket 3: 3 admitted, yet the server
	// bucket gives out all 5 tokens (charged independently).
	if got := admitN(e, Attributes{Namespace: "b"}, 10); got != 3 {
		t.Fatalf("admitted %d in b, want 3", got)
	}
	srv, _ := e.Counts(string(v1alpha1.EventRateLimitServer))
	ns, _ := e.Counts(string(v1alpha1.EventRateLimitNamespace))
	if srv.Accepted != 10 || srv.Rejected != 5 || ns.Accepted != 6 || ns.Rejected != 9 {
		t.Fatalf("server %+v namespace %+v", srv, ns)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	e := New(clocktesting.NewFakePassiveClock(t0), m)
	e.Update([]Config{seedExample()})
	admitN(e, Attributes{Namespace: "a"}, 150)
	want := `
# HELP apf_operator_event_rate_limit_events_total Event creations the EventRateLimit webhook admitted (accepted) or rejected with HTTP 429 (rejected).
# TYPE apf_operator_event_rate_limit_events_total counter
apf_operator_event_rate_limit_events_total{result="accepted"} 100
apf_operator_event_rate_limit_events_total{result="rejected"} 50
`
	if err := testutil.CollectAndCompare(reg, strings.NewReader(want), "apf_operator_event_rate_limit_events_total"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		typ, result string
		want        float64
	}{{"Server", "accepted", 150}, {"Namespace", "accepted", 100}, {"Namespace", "rejected", 50}, {"User", "accepted", 0}} {
		got := testutil.ToFloat64(m.decisions[typeIndex(v1alpha1.EventRateLimitType(c.typ))][resultIndex(c.result == "accepted")])
		if got != c.want {
			t.Errorf("decisions{%s,%s} = %v, want %v", c.typ, c.result, got, c.want)
		}
	}
}

func TestSourceAndObjectKeyDistinguishesFields(t *testing.T) {
	a := SourceAndObjectKey(Source{Component: "ab"}, Object{Name: "c"})
	b := SourceAndObjectKey(Source{Component: "a"}, Object{Name: "bc"})
	if a == b {
		t.Fatal("keys of different sources and objects must differ")
	}
}
