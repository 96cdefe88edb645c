package effective

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// kube-apiserver's flowcontrol v1 defaults of a Limited level (SetDefaults_* in
// k8s.io/kubernetes pkg/apis/flowcontrol/v1): what a bound level's in-process queuing takes for
// the fields its spec leaves out when its native level is not one of the bootstrap set.
const (
	NativeDefaultShares           = 30
	NativeDefaultQueues           = 64
	NativeDefaultHandSize         = 8
	NativeDefaultQueueLengthLimit = 50
	NativeDefaultLendablePercent  = 0
)

// NativeLevelSource says where the in-process engine took the queuing fields a bound level's
// spec leaves out.
type NativeLevelSource string

// Sources of a bound level's absent queuing fields.
const (
	// SourceBootstrap: kube-apiserver's bootstrap level of that name (bootstrapset).
	SourceBootstrap NativeLevelSource = "bootstrap"
	// SourceAPIDefaults: kube-apiserver's v1 API defaults (the level is not a bootstrap one).
	SourceAPIDefaults NativeLevelSource = "v1 defaults"
)

// BoundFill is the value of each queuing field a bound level takes when its spec leaves it out
// (HandSize 0 with a single queue), and where the values come from.
type BoundFill struct {
	Shares, QueuesPerWidth, HandSize, QueueLengthLimit, LendablePercent int32
	BorrowingLimitPercent                                               *int32
	Source                                                              NativeLevelSource
}

// BoundDefaults returns the queuing fields kube-apiserver's level of that name has in the
// bootstrap set this binary was built with, else the v1 API defaults, and which of the two.
// The in-process engine has no view of the cluster's own level, so these stand for it
// (docs/enforcement.md, "Bound levels").
func BoundDefaults(nativeLevel string) BoundFill {
	for _, plc := range bootstrapset.PriorityLevels() {
		if plc.Name == nativeLevel && plc.Spec.Type == flowcontrolv1.PriorityLevelEnablementLimited && plc.Spec.Limited != nil {
			return fillOf(plc.Spec.Limited)
		}
	}
	return BoundFill{Shares: NativeDefaultShares, QueuesPerWidth: NativeDefaultQueues, HandSize: NativeDefaultHandSize,
		QueueLengthLimit: NativeDefaultQueueLengthLimit, LendablePercent: NativeDefaultLendablePercent, Source: SourceAPIDefaults}
}

func fillOf(l *flowcontrolv1.LimitedPriorityLevelConfiguration) BoundFill {
	f := BoundFill{Shares: NativeDefaultShares, QueuesPerWidth: NativeDefaultQueues, HandSize: NativeDefaultHandSize,
		QueueLengthLimit: NativeDefaultQueueLengthLimit, BorrowingLimitPercent: copyPtr(l.BorrowingLimitPercent),
		Source: SourceBootstrap}
	if l.NominalConcurrencyShares != nil {
		f.Shares = *l.NominalConcurrencyShares
	}
	if l.LendablePercent != nil {
		f.LendablePercent = *l.LendablePercent
	}
	switch q := l.LimitResponse.Queuing; {
	case l.LimitResponse.Type == flowcontrolv1.LimitResponseTypeReject:
		f.QueuesPerWidth, f.HandSize, f.QueueLengthLimit = 1, 0, 1 // no queues natively; one short queue is the nearest
	case q != nil:
		f.QueuesPerWidth, f.HandSize, f.QueueLengthLimit = q.Queues, q.HandSize, q.QueueLengthLimit
	}
	if f.QueuesPerWidth <= 1 {
		f.HandSize = 0
	}
	return f
}

// fillBound gives a bound level's absent queuing fields the values of its native level
// (BoundDefaults); fields its spec gives are kept. queuesPerWidth and handSize go together.
func fillBound(p *Priority, s *flowv1.RequestPrioritySpec) {
	p.NativeLevel = s.NativeLevel
	if s.NativeLevel == "" || p.Exempt() {
		return
	}
	f := BoundDefaults(s.NativeLevel)
	if s.AssuredConcurrencyShares == nil {
		p.Shares = f.Shares
	}
	if s.QueuesPerWidth == nil {
		p.QueuesPerWidth, p.HandSize = f.QueuesPerWidth, f.HandSize
	}
	if s.QueueLengthLimit == nil {
		p.QueueLengthLimit = f.QueueLengthLimit
	}
	if s.LendablePercent == nil {
		p.LendablePercent, p.LendableAbsent = f.LendablePercent, false
	}
	if s.BorrowingLimitPercent == nil {
		p.BorrowingLimitPercent = copyPtr(f.BorrowingLimitPercent)
	}
}
