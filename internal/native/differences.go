package native

import (
	"fmt"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// Item 5 of issue #32: a projected level is enforced by kube-apiserver, which reads some of its
// fields differently from the in-process engine. The Projected condition's message names each
// such field of the object (only those that differ for it), and `explain` shows the same list.

// Difference is one spec field that kube-apiserver reads differently from the in-process engine.
type Difference struct {
	// Field is the spec field's path ("spec.lendablePercent"), or what the difference is about.
	Field string
	// InProcess and Native say what each side does with it.
	InProcess, Native string
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: in-process %s; kube-apiserver %s", d.Field, d.InProcess, d.Native)
}

// Differences every projected limited level has: the order of levels and the width of a request.
var (
	orderDifference = Difference{Field: "spec.priorityLevel",
		InProcess: "dispatches and lends idle seats to levels highest priority first",
		Native:    "has no order of levels: they are peers that share the server by their shares"}
	widthDifference = Difference{Field: "request width",
		InProcess: "counts a mutating request as 2 seats (width 2) and a read-only one as 1",
		Native:    "gives most requests 1 seat by its work estimator (a list up to 10; mutations and watches hold seats briefly after they finish)"}
)

// withDifferences appends the differences to a Projected message.
func withDifferences(msg string, diffs []Difference) string {
	if len(diffs) == 0 {
		return msg
	}
	parts := make([]string, len(diffs))
	for i, d := range diffs {
		parts[i] = d.String()
	}
	return msg + ". kube-apiserver reads these differently from the in-process engine: " + strings.Join(parts, "; ")
}

// LevelDifferences lists the fields of a projected, unbound, non-exempt level p that
// kube-apiserver reads differently from the in-process engine; applied is p with the shares the
// autopilot applies (p itself when none).
func LevelDifferences(p, applied *effective.Priority) []Difference {
	diffs := []Difference{orderDifference, widthDifference, {Field: "spec.queuesPerWidth",
		InProcess: fmt.Sprintf("keeps %d queue(s) for each request width", p.QueuesPerWidth),
		Native:    fmt.Sprintf("keeps one set of %d queue(s) for the level and counts width as seats in it", max(p.QueuesPerWidth, 1))}}
	if p.LendableAbsent {
		diffs = append(diffs, Difference{Field: "spec.lendablePercent", InProcess: "is absent: lends every idle seat",
			Native: "reads 0: lends none"})
	}
	if applied.Shares != p.Shares {
		diffs = append(diffs, Difference{Field: "spec.assuredConcurrencyShares",
			InProcess: fmt.Sprintf("uses the configured %d", p.Shares),
			Native:    fmt.Sprintf("uses the %d the autopilot applies", applied.Shares)})
	}
	return diffs
}

// boundDifferences lists the fields of a level bound to target that kube-apiserver reads
// differently from the in-process engine: the order and width, and each queuing field whose
// in-process value (the spec's, else the bootstrap level's or the v1 default) is not target's.
func boundDifferences(p *effective.Priority, target *flowcontrolv1.PriorityLevelConfiguration) []Difference {
	diffs := []Difference{orderDifference, widthDifference}
	l := target.Spec.Limited
	if target.Spec.Type != flowcontrolv1.PriorityLevelEnablementLimited || l == nil {
		return append(diffs, Difference{Field: "spec.nativeLevel",
			InProcess: fmt.Sprintf("queues these requests at level %d", p.Level),
			Native:    fmt.Sprintf("exempts them (%s is of type %s)", target.Name, target.Spec.Type)})
	}
	native := nativeQueuing(l)
	for _, f := range []struct {
		field        string
		ours, theirs *int32
	}{
		{"spec.assuredConcurrencyShares", &p.Shares, l.NominalConcurrencyShares},
		{"spec.queuesPerWidth", &p.QueuesPerWidth, &native.queues},
		{"spec.handSize", &p.HandSize, &native.hand},
		{"spec.queueLengthLimit", &p.QueueLengthLimit, &native.length},
		{"spec.lendablePercent", &p.LendablePercent, l.LendablePercent},
		{"spec.borrowingLimitPercent", p.BorrowingLimitPercent, l.BorrowingLimitPercent},
	} {
		if !sameValue(f.ours, f.theirs) {
			diffs = append(diffs, Difference{Field: f.field, InProcess: "uses " + valueText(f.ours),
				Native: fmt.Sprintf("uses %s's %s", target.Name, valueText(f.theirs))})
		}
	}
	return diffs
}

// queuing is a native level's queues, hand size and queue length as the in-process engine
// would hold them (a single queue has hand size 0; Reject is no queue).
type queuing struct{ queues, hand, length int32 }

func nativeQueuing(l *flowcontrolv1.LimitedPriorityLevelConfiguration) queuing {
	q := l.LimitResponse.Queuing
	if l.LimitResponse.Type != flowcontrolv1.LimitResponseTypeQueue || q == nil {
		return queuing{}
	}
	out := queuing{queues: q.Queues, hand: q.HandSize, length: q.QueueLengthLimit}
	if out.queues <= 1 {
		out.hand = 0
	}
	return out
}

func sameValue(a, b *int32) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func valueText(v *int32) string {
	if v == nil {
		return "no value (no limit)"
	}
	return fmt.Sprint(*v)
}

// Differences lists the spec fields of the level p in effect that kube-apiserver reads
// differently from the in-process engine, once projected: for a bound level (p.NativeLevel)
// against its native level target (nil: unknown, only the order and width are listed); for the
// exempt level, none.
func Differences(p *effective.Priority, target *flowcontrolv1.PriorityLevelConfiguration) []Difference {
	switch {
	case p.Exempt():
		return nil
	case p.NativeLevel == "":
		return LevelDifferences(p, p)
	case target == nil:
		return []Difference{orderDifference, widthDifference}
	}
	return boundDifferences(p, target)
}
