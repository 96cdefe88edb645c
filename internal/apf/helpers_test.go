package apf_test

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

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

// userSchema matches the requests of one user.
func userSchema(name string, mp int32, priority, user string) flowv1.FlowSchema {
	return flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: mp, RequestPriority: flowv1.RequestPriorityReference{Name: priority},
		Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{{Equals: &flowv1.ValueTest{Field: flowv1.FieldUser, Value: user}}}}}}}
}

// oneQueueConfig has one level with a single queue of length limit 1, FlowSchema "users"
// matching user u at that level, and the backstop exempt level.
func oneQueueConfig(level string) *effective.Config {
	return effective.Compute([]flowv1.RequestPriority{rp(level, 100, 10, 1, 0, 1)},
		[]flowv1.FlowSchema{userSchema("users", 10, level, "u")})
}

func attrs(user string, groups []string, method, path string) *request.Attributes {
	a := &request.Attributes{}
	p, q, _ := strings.Cut(path, "?")
	request.ParseURL(method, p, q, a)
	a.User, a.Groups = user, groups
	return a
}
