package native_test

import (
	"fmt"
	"testing"

	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/worstcase"
)

// BenchmarkProject measures Project over configurations of the size fleets run: 100 levels and
// 1,000 or 10,000 FlowSchemas, a third of them not expressible, once from scratch and once
// against the plan it produced (the steady state of the projector).
func BenchmarkProject(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		cfg := benchConfig(100, n)
		first := native.Project(cfg, native.Existing{})
		existing := native.Existing{PriorityLevels: first.PriorityLevels, FlowSchemas: first.FlowSchemas}
		b.Run(fmt.Sprintf("schemas=%d/fresh", n), func(b *testing.B) {
			for b.Loop() {
				native.Project(cfg, native.Existing{})
			}
		})
		b.Run(fmt.Sprintf("schemas=%d/steady", n), func(b *testing.B) {
			for b.Loop() {
				native.Project(cfg, existing)
			}
		})
	}
}

func benchConfig(levels, schemas int) *effective.Config {
	var rps []flowv1.RequestPriority
	for i := range levels {
		rp := flowv1.RequestPriority{Spec: flowv1.RequestPrioritySpec{PriorityLevel: int32(1000 + i),
			AssuredConcurrencyShares: ptr.To[int32](10), QueuesPerWidth: ptr.To[int32](64), HandSize: ptr.To[int32](6),
			QueueLengthLimit: ptr.To[int32](50)}}
		rp.Name = fmt.Sprintf("level-%d", i)
		rps = append(rps, rp)
	}
	var fss []flowv1.FlowSchema
	for i := range schemas {
		user := flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: flowv1.FieldUser, Value: fmt.Sprintf("user-%d", i)}}
		if i%3 == 0 { // not expressible: an unbounded user pattern
			user = flowv1.AtomicTest{PatternMatch: &flowv1.PatternTest{Field: flowv1.FieldUser, Pattern: fmt.Sprintf("team-%d-.*", i)}}
		}
		fs := flowv1.FlowSchema{Spec: flowv1.FlowSchemaSpec{MatchingPriority: int32(i), RequestPriority: flowv1.RequestPriorityReference{
			Name: fmt.Sprintf("level-%d", i%levels)}, Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{user,
			{InSet: &flowv1.SetTest{Field: flowv1.FieldVerb, Set: []string{"get", "list"}}},
			{PatternMatch: &flowv1.PatternTest{Field: flowv1.FieldNamespace, Pattern: ".+"}}}}}}}
		fs.Name = fmt.Sprintf("schema-%d", i)
		fss = append(fss, fs)
	}
	return effective.Compute(rps, fss)
}

// BenchmarkWorstCaseMatchErrors measures the native analysis alone (what the webhook warns
// with) on every adversarial FlowSchema of package worstcase.
func BenchmarkWorstCaseMatchErrors(b *testing.B) {
	for _, c := range worstcase.FlowSchemas("target") {
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				native.MatchErrors(&c.Spec)
			}
		})
	}
}
