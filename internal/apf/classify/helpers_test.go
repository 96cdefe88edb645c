package classify_test

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// Builders of test objects.

func rp(name string, level, shares, queues, hand, limit int32) flowv1.RequestPriority {
	spec := flowv1.RequestPrioritySpec{PriorityLevel: level}
	if level != 0 {
		spec.AssuredConcurrencyShares = ptr.To(shares)
		spec.QueuesPerWidth = ptr.To(queues)
		spec.QueueLengthLimit = ptr.To(limit)
		if queues > 1 {
			spec.HandSize = ptr.To(hand)
		}
	}
	return flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
}

func fs(name string, mp int32, priority string, dist *flowv1.FlowDistinguisher, match ...flowv1.Conjunction) flowv1.FlowSchema {
	if match == nil {
		match = []flowv1.Conjunction{}
	}
	return flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: mp, RequestPriority: flowv1.RequestPriorityReference{Name: priority},
		FlowDistinguisher: dist, Match: match}}
}

func byUser(regex string) *flowv1.FlowDistinguisher {
	d := &flowv1.FlowDistinguisher{Source: flowv1.SourceUser}
	if regex != "" {
		d.Transformation = &flowv1.Transformation{Regex: regex}
	}
	return d
}

func byNamespace() *flowv1.FlowDistinguisher {
	return &flowv1.FlowDistinguisher{Source: flowv1.SourceNamespace}
}

// attrs resolves a request the way the default resolver does.
func attrs(user string, groups []string, method, path string) *request.Attributes {
	a := &request.Attributes{}
	p, q, _ := strings.Cut(path, "?")
	request.ParseURL(method, p, q, a)
	a.User, a.Groups = user, groups
	return a
}
