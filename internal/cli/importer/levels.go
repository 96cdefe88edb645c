package importer

import (
	"errors"
	"fmt"
	"sort"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// v1 defaults of the native fields (k8s.io/kubernetes pkg/apis/flowcontrol/v1/defaults.go).
const (
	defaultShares           = 30
	defaultQueues           = 64
	defaultHandSize         = 8
	defaultQueueLengthLimit = 50
	defaultPrecedence       = 1000
)

// levelStep is the distance between imported priority levels: 1000, 2000, ...
const levelStep = 1000

// levelSpec converts a Limited level into a RequestPriority spec, without its priorityLevel,
// or says why it cannot be imported.
func levelSpec(plc *flowcontrolv1.PriorityLevelConfiguration) (*flowv1.RequestPrioritySpec, error) {
	limited := plc.Spec.Limited
	switch {
	case plc.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt:
		return nil, errors.New("spec.type: Exempt: only kube-apiserver's `exempt` level may be exempt; refer to `exempt`")
	case plc.Spec.Type != flowcontrolv1.PriorityLevelEnablementLimited || limited == nil:
		return nil, fmt.Errorf("spec.type: %q: want Limited with spec.limited set", plc.Spec.Type)
	case limited.LimitResponse.Type == flowcontrolv1.LimitResponseTypeReject:
		return nil, errors.New("spec.limited.limitResponse.type: Reject: a RequestPriority always queues (one queue of " +
			"one request at least) and cannot reject at once; give the level limitResponse Queue to import it, or " +
			"send its requests to another level")
	case limited.LimitResponse.Type != flowcontrolv1.LimitResponseTypeQueue || limited.LimitResponse.Queuing == nil:
		return nil, errors.New("spec.limited.limitResponse: want type Queue with queuing set")
	}
	q := queuing(*limited.LimitResponse.Queuing)
	spec := &flowv1.RequestPrioritySpec{
		PriorityLevel:            levelStep, // a placeholder until the levels are ordered
		AssuredConcurrencyShares: int32Or(limited.NominalConcurrencyShares, defaultShares),
		QueuesPerWidth:           &q.Queues,
		QueueLengthLimit:         &q.QueueLengthLimit,
		LendablePercent:          int32Or(limited.LendablePercent, 0), // absent: 0 natively, "lend all" in-process
		BorrowingLimitPercent:    copyInt32(limited.BorrowingLimitPercent),
	}
	if q.Queues > 1 {
		spec.HandSize = &q.HandSize
	}
	if errs := validation.RequestPrioritySpec(spec, field.NewPath("spec")); len(errs) > 0 {
		return nil, fmt.Errorf("the RequestPriority it would become is invalid (%v); "+
			"bring the native level within the RequestPriority ranges", errs.ToAggregate())
	}
	return spec, nil
}

// queuing applies the v1 defaults to a queuing configuration.
func queuing(q flowcontrolv1.QueuingConfiguration) flowcontrolv1.QueuingConfiguration {
	if q.Queues == 0 {
		q.Queues = defaultQueues
	}
	if q.HandSize == 0 {
		q.HandSize = defaultHandSize
	}
	if q.QueueLengthLimit == 0 {
		q.QueueLengthLimit = defaultQueueLengthLimit
	}
	return q
}

// assignLevels gives the imported levels priorityLevel 1000, 2000, ... in the order in which
// the FlowSchemas, in native order, first refer to them, then the others by name.
func assignLevels(specs map[string]*flowv1.RequestPrioritySpec, schemas []*flowcontrolv1.FlowSchema) {
	next := int32(levelStep)
	assign := func(name string) {
		if spec := specs[name]; spec != nil && spec.PriorityLevel == 0 {
			spec.PriorityLevel, next = next, next+levelStep
		}
	}
	for _, spec := range specs {
		spec.PriorityLevel = 0
	}
	for _, fs := range schemas {
		assign(fs.Spec.PriorityLevelConfiguration.Name)
	}
	rest := make([]string, 0, len(specs))
	for name := range specs {
		rest = append(rest, name)
	}
	sort.Strings(rest)
	for _, name := range rest {
		assign(name)
	}
}

func int32Or(p *int32, def int32) *int32 {
	if p == nil {
		return &def
	}
	v := *p
	return &v
}

func copyInt32(p *int32) *int32 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
