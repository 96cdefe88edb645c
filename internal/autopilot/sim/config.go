package sim

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// Queue settings of every simulated level (the bootstrap workload levels' order of size).
const (
	queuesPerWidth   = 16
	handSize         = 4
	queueLengthLimit = 50
)

// objects returns the scenario's RequestPriority and FlowSchema objects, with the pool levels'
// shares taken from applied (the configured shares when a level is missing from it). Each
// level's FlowSchema takes the resource requests in the namespace named after the level, one
// flow per user.
func objects(levels []LevelSpec, applied map[string]int32) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
	rps := make([]flowv1.RequestPriority, 0, len(levels))
	fss := make([]flowv1.FlowSchema, 0, len(levels))
	for i, l := range levels {
		shares := l.Shares
		if s, ok := applied[l.Name]; ok {
			shares = s
		}
		spec := flowv1.RequestPrioritySpec{PriorityLevel: l.PriorityLevel,
			AssuredConcurrencyShares: i32(shares), QueuesPerWidth: i32(queuesPerWidth),
			HandSize: i32(handSize), QueueLengthLimit: i32(queueLengthLimit),
			LendablePercent: l.LendablePercent, BorrowingLimitPercent: l.BorrowingLimitPercent}
		if b := l.Autopilot; b != nil {
			spec.Autopilot = &flowv1.RequestPriorityAutopilot{MinShares: b.MinShares, MaxShares: b.MaxShares}
			if b.MaxStepPercent != 0 {
				spec.Autopilot.MaxStepPercent = i32(b.MaxStepPercent)
			}
		}
		rps = append(rps, flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: l.Name}, Spec: spec})
		fss = append(fss, flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: l.Name}, Spec: flowv1.FlowSchemaSpec{
			MatchingPriority:  int32(1000 + i),
			RequestPriority:   flowv1.RequestPriorityReference{Name: l.Name},
			FlowDistinguisher: &flowv1.FlowDistinguisher{Source: flowv1.SourceUser},
			Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{
				{Equals: &flowv1.ValueTest{Field: flowv1.FieldNamespace, Value: l.Name}}}}},
		}})
	}
	return rps, fss
}

// buildConfig computes the effective configuration of the scenario's objects with the given
// pool shares; it fails when an object is not in effect (a scenario's mistake, or shares the
// validation refuses).
func buildConfig(levels []LevelSpec, applied map[string]int32) (*effective.Config, error) {
	rps, fss := objects(levels, applied)
	cfg := effective.Compute(rps, fss)
	var bad []string
	for name, st := range cfg.RequestPriorityStatus {
		if !st.InEffect {
			bad = append(bad, fmt.Sprintf("RequestPriority %s: %s", name, st.Message))
		}
	}
	for name, st := range cfg.FlowSchemaStatus {
		if !st.InEffect {
			bad = append(bad, fmt.Sprintf("FlowSchema %s: %s", name, st.Message))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, fmt.Errorf("simulated objects not in effect: %v", bad)
	}
	return cfg, nil
}
