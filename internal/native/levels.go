package native

import (
	"fmt"
	"math"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// maxHashBits is kube-apiserver's shuffle-sharding limit: ceil(log2(queues) × handSize) bits.
const maxHashBits = 60

// priorityLevel returns the native level of a non-exempt level, or why it cannot be expressed.
func priorityLevel(p *effective.Priority, name string) (*flowcontrolv1.PriorityLevelConfiguration, *field.Error) {
	queues, hand := p.QueuesPerWidth, p.HandSize
	if queues <= 1 {
		queues, hand = 1, 1
	}
	if bits := requiredEntropyBits(queues, hand); bits > maxHashBits {
		return nil, field.Invalid(field.NewPath("spec", "handSize"), p.HandSize, fmt.Sprintf(
			"not expressible natively: kube-apiserver deals hands of at most %d bits and ceil(log2(queues=%d) × "+
				"handSize=%d) = %d; lower handSize or queuesPerWidth", maxHashBits, queues, hand, bits))
	}
	shares, lendable := p.Shares, p.LendablePercent
	source := KindRequestPriority
	meta := ownedMeta(name, source, p.Name)
	return &flowcontrolv1.PriorityLevelConfiguration{
		TypeMeta:   typeMeta("PriorityLevelConfiguration"),
		ObjectMeta: meta,
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: &shares,
				LendablePercent:          &lendable,
				BorrowingLimitPercent:    ptr.To(borrowingLimit(p)),
				LimitResponse: flowcontrolv1.LimitResponse{
					Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{
						Queues: queues, HandSize: hand, QueueLengthLimit: p.QueueLengthLimit,
					},
				},
			},
		},
	}, nil
}

// requiredEntropyBits is kube-apiserver's shufflesharding.RequiredEntropyBits.
func requiredEntropyBits(deck, hand int32) int {
	return int(math.Ceil(math.Log2(float64(deck)) * float64(hand)))
}

// LevelErrors lists why a RequestPriority spec cannot be projected exactly (a hand kube-apiserver
// refuses); nil when it can. The webhook warns with it.
func LevelErrors(spec *flowv1.RequestPrioritySpec) field.ErrorList {
	if spec.PriorityLevel == flowv1.ExemptPriorityLevel || spec.QueuesPerWidth == nil || spec.HandSize == nil {
		return nil
	}
	p := &effective.Priority{Name: "x", Level: spec.PriorityLevel, QueuesPerWidth: *spec.QueuesPerWidth, HandSize: *spec.HandSize}
	if _, err := priorityLevel(p, "x"); err != nil {
		return field.ErrorList{err}
	}
	return nil
}
