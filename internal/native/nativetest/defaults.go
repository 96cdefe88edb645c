package nativetest

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/utils/ptr"
)

// defaultLevel applies the defaults kube-apiserver's API applies to a stored priority level
// (k8s.io/kubernetes pkg/apis/flowcontrol/v1/defaults.go), which its controller relies on: a
// hand-made object given to Start is then held as a cluster would hold it.
func defaultLevel(l *flowcontrolv1.PriorityLevelConfiguration) *flowcontrolv1.PriorityLevelConfiguration {
	if lim := l.Spec.Limited; lim != nil {
		if lim.NominalConcurrencyShares == nil {
			lim.NominalConcurrencyShares = ptr.To[int32](30)
		}
		if lim.LendablePercent == nil {
			lim.LendablePercent = ptr.To[int32](0)
		}
		if lim.LimitResponse.Type == flowcontrolv1.LimitResponseTypeQueue {
			if lim.LimitResponse.Queuing == nil {
				lim.LimitResponse.Queuing = &flowcontrolv1.QueuingConfiguration{}
			}
			q := lim.LimitResponse.Queuing
			q.Queues = cmpOr(q.Queues, 64)
			q.HandSize = cmpOr(q.HandSize, 8)
			q.QueueLengthLimit = cmpOr(q.QueueLengthLimit, 50)
		}
	}
	if ex := l.Spec.Exempt; ex != nil {
		if ex.NominalConcurrencyShares == nil {
			ex.NominalConcurrencyShares = ptr.To[int32](0)
		}
		if ex.LendablePercent == nil {
			ex.LendablePercent = ptr.To[int32](0)
		}
	}
	return l
}

// defaultSchema applies the API's default matchingPrecedence, 1000.
func defaultSchema(fs *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchema {
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = 1000
	}
	return fs
}

func cmpOr(v, def int32) int32 {
	if v == 0 {
		return def
	}
	return v
}
