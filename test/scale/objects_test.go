package scale

import (
	"fmt"
	"math/rand/v2"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// load is the configuration a platform team applies: rps tenants, each a RequestPriority at
// its own level, and fss FlowSchemas spread evenly over them, each matching one service
// account's user name (what kube-apiserver can enforce exactly).
type load struct {
	rps, fss int
}

// matchingPriorities is how many distinct matching priorities the FlowSchemas are spread over.
const matchingPriorities = 97

func rpName(i int) string { return fmt.Sprintf("tenant-%04d", i) }
func fsName(i int) string { return fmt.Sprintf("svc-%05d", i) }

// order returns the indexes of the load's objects in a random order (seeded: reproducible),
// as a GitOps sync applies a directory; object builds one of them.
func (l load) order(seed uint64) []int {
	out := make([]int, l.rps+l.fss)
	for i := range out {
		out[i] = i
	}
	r := rand.New(rand.NewPCG(seed, seed))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// scaleMaxSeatLoss is the operator's --native-max-seat-loss-percent in this test: the widest
// share budget, so that every level of the load is projected.
const scaleMaxSeatLoss = 90

// object builds object i of the load: RequestPriorities first, then FlowSchemas. Objects are
// built when applied and dropped after, so that the load weighs little on the measured heap.
func (l load) object(i int) client.Object {
	if i < l.rps {
		return &flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: rpName(i)},
			Spec: flowv1.RequestPrioritySpec{
				PriorityLevel: int32(100 + i),
				// One share each, with the share budget at its widest (scaleMaxSeatLoss): a
				// thousand levels then fit kube-apiserver's 245 shares × 9 (docs/enforcement.md).
				AssuredConcurrencyShares: ptr.To[int32](1),
				QueuesPerWidth:           ptr.To[int32](64),
				HandSize:                 ptr.To[int32](6),
				QueueLengthLimit:         ptr.To[int32](50),
			}}
	}
	i -= l.rps
	return &flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: fsName(i)},
		Spec: flowv1.FlowSchemaSpec{
			MatchingPriority: int32(1000 + i%matchingPriorities),
			RequestPriority:  flowv1.RequestPriorityReference{Name: rpName(i % l.rps)},
			Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{{Equals: &flowv1.ValueTest{
				Field: flowv1.FieldUser, Value: fmt.Sprintf("system:serviceaccount:tenant-%04d:svc-%05d", i%l.rps, i),
			}}}}},
		}}
}

// projectable is how many of the load's FlowSchemas get a native precedence: those of the
// first nativeCapacity matching priorities (all of them: the load has 97).
func (l load) projectable() int {
	n := 0
	for i := range l.fss {
		if i%matchingPriorities < nativeCapacity {
			n++
		}
	}
	return n
}
