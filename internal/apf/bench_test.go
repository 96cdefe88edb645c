package apf_test

import (
	"context"
	"fmt"
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf"
	"github.com/apf-operator/apf-operator/internal/apf/dispatch"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// benchConfig follows notes/upstream-apf-cost.md: limited levels of 10 shares (128 queues,
// hand 6, limit 100; one with 1 queue), n-1 FlowSchemas matching one user each and one
// matching group system:authenticated at the lowest precedence, every one distinguishing flows
// by user.
func benchConfig(n int) *effective.Config {
	rps := []flowv1.RequestPriority{rp("exempt", 0, 0, 0, 0, 0), rp("l1", 100, 10, 128, 6, 100),
		rp("l2", 200, 10, 128, 6, 100), rp("l3", 300, 10, 128, 6, 100), rp("l4", 400, 10, 128, 6, 100),
		rp("l5", 500, 10, 1, 0, 100)}
	fss := make([]flowv1.FlowSchema, 0, n)
	byUser := &flowv1.FlowDistinguisher{Source: flowv1.SourceUser}
	for k := 0; k < n-1; k++ {
		s := userSchema(fmt.Sprintf("tenant-%04d", k), int32(1000+k), fmt.Sprintf("l%d", 1+k%4), fmt.Sprintf("tenant-%d", k))
		s.Spec.FlowDistinguisher = byUser
		fss = append(fss, s)
	}
	all := userSchema("authenticated", 1_000_000, "l4", "")
	all.Spec.FlowDistinguisher = byUser
	all.Spec.Match = []flowv1.Conjunction{{And: []flowv1.AtomicTest{{SuperSet: &flowv1.SetTest{
		Field: flowv1.FieldGroups, Set: []string{"system:authenticated"}}}}}}
	return effective.Compute(rps, append(fss, all))
}

// BenchmarkEngineHandle measures one uncontended request (classify, admit, execute a no-op,
// finish): GET pods by tenant-k in ns-k, k over the given number of flows.
func BenchmarkEngineHandle(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		for _, flows := range []int{1000, 100_000} {
			b.Run(fmt.Sprintf("schemas=%d/flows=%d", n, flows), func(b *testing.B) {
				e := apf.NewEngine(benchConfig(n), dispatch.Options{ServerConcurrencyLimit: 600})
				reqs := make([]*request.Attributes, flows)
				for k := range reqs {
					reqs[k] = attrs(fmt.Sprintf("tenant-%d", k), []string{"system:authenticated"}, "GET",
						fmt.Sprintf("/api/v1/namespaces/ns-%d/pods", k))
				}
				ctx, exec := context.Background(), func() {}
				var r apf.Result
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					if e.HandleInto(ctx, reqs[i%flows], &r, exec) != dispatch.Executed {
						b.Fatal("rejected")
					}
				}
			})
		}
	}
}
