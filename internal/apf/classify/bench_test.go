package classify_test

import (
	"fmt"
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/defaults"
)

var benchSizes = []int{10, 100, 1000}

// tenantConfig is the configuration of the upstream cost note (notes/upstream-apf-cost.md):
// n-1 FlowSchemas that each match one user (tenant-k) and, at the lowest precedence, one that
// matches group system:authenticated. With patterns, the per-user schemas test the user with
// patternMatch instead of equals, so the index cannot help.
func tenantConfig(n int, patterns bool) *effective.Config {
	rps := []flowv1.RequestPriority{rp("top", 0, 0, 0, 0, 0), rp("tenants", 100, 10, 128, 6, 100),
		rp("rest", 200, 10, 128, 6, 100)}
	fss := make([]flowv1.FlowSchema, 0, n)
	for k := 0; k < n-1; k++ {
		test := apitest.Equals(flowv1.FieldUser, fmt.Sprintf("tenant-%d", k))
		if patterns {
			test = apitest.PatternMatch(flowv1.FieldUser, fmt.Sprintf("tenant-%d", k))
		}
		fss = append(fss, fs(fmt.Sprintf("tenant-%04d", k), int32(1000+k), "tenants", byUser(""), apitest.And(test)))
	}
	fss = append(fss, fs("authenticated", 1_000_000, "rest", byUser(""), apitest.And(apitest.SuperSet("system:authenticated"))))
	return effective.Compute(rps, fss)
}

func tenantRequests(n int) []*request.Attributes {
	reqs := make([]*request.Attributes, 64)
	for i := range reqs {
		k := (i * 7919) % max(n-1, 1) // spread over the schemas, the last ones included
		reqs[i] = attrs(fmt.Sprintf("tenant-%d", k), []string{"system:authenticated"}, "GET",
			fmt.Sprintf("/api/v1/namespaces/ns-%d/pods", k))
	}
	return reqs
}

func benchClassify(b *testing.B, cfg *effective.Config, reqs []*request.Attributes, wantSchema func(int) string) {
	c := classify.Compile(cfg)
	var r classify.Result
	for i, a := range reqs { // the benchmark measures correct work
		c.Classify(a, &r)
		if want := wantSchema(i); r.Schema.Name != want {
			b.Fatalf("request %d classified to %q, want %q", i, r.Schema.Name, want)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.Classify(reqs[i%len(reqs)], &r)
	}
}

// BenchmarkClassifyIndexed: every per-user schema tests the user by equality (indexed).
func BenchmarkClassifyIndexed(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("schemas=%d", n), func(b *testing.B) {
			reqs := tenantRequests(n)
			benchClassify(b, tenantConfig(n, false), reqs, func(i int) string {
				return fmt.Sprintf("tenant-%04d", (i*7919)%(n-1))
			})
		})
	}
}

// BenchmarkClassifyFallThrough: the request matches no per-user schema and reaches the
// lowest-precedence group schema.
func BenchmarkClassifyFallThrough(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("schemas=%d", n), func(b *testing.B) {
			reqs := []*request.Attributes{attrs("someone-else", []string{"system:authenticated"}, "GET", "/api/v1/namespaces/x/pods")}
			benchClassify(b, tenantConfig(n, false), reqs, func(int) string { return "authenticated" })
		})
	}
}

// BenchmarkClassifyPatterns: the per-user schemas test the user with patterns (scanned).
func BenchmarkClassifyPatterns(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("schemas=%d", n), func(b *testing.B) {
			reqs := tenantRequests(n)
			benchClassify(b, tenantConfig(n, true), reqs, func(i int) string {
				return fmt.Sprintf("tenant-%04d", (i*7919)%(n-1))
			})
		})
	}
}

// BenchmarkClassifyDefaults classifies a kubectl request against the default objects.
func BenchmarkClassifyDefaults(b *testing.B) {
	cfg := effective.Compute(defaults.RequestPriorities(), defaults.FlowSchemas())
	reqs := []*request.Attributes{attrs("alice", []string{"system:authenticated"}, "GET", "/api/v1/namespaces/team-a/pods")}
	benchClassify(b, cfg, reqs, func(int) string { return "workload-high" })
}

// BenchmarkCompile measures the cost of a configuration change.
func BenchmarkCompile(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("schemas=%d", n), func(b *testing.B) {
			cfg := tenantConfig(n, false)
			b.ReportAllocs()
			for b.Loop() {
				classify.Compile(cfg)
			}
		})
	}
}
