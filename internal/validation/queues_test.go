package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

func TestQueueCapacity(t *testing.T) {
	spec := func(queues, hand, limit int32) *v1alpha1.RequestPrioritySpec {
		s := queued(1000)
		s.QueuesPerWidth, s.QueueLengthLimit = ptr.To(queues), ptr.To(limit)
		s.HandSize = nil
		if queues > 1 {
			s.HandSize = ptr.To(hand)
		}
		return &s
	}
	limitPath := specPath.Child("queueLengthLimit")
	cases := []struct {
		name string
		spec *v1alpha1.RequestPrioritySpec
		want field.ErrorList
	}{
		{"kube-apiserver's workload-low (128 × 50)", spec(128, 6, 50), nil},
		{"at the bound (128 × 256)", spec(128, 6, 256), nil},
		{"one queue at the bound", spec(1, 0, MaxQueuedPerWidth), nil},
		{"one past the bound", spec(128, 6, 257), field.ErrorList{field.Invalid(limitPath, int32(257),
			"queuesPerWidth × queueLengthLimit = 128 × 257 = 32896 requests may wait per width (65792 per level), "+
				"more than 32768: a level that holds that many never sheds load; lower queueLengthLimit (at most 256 "+
				"with queuesPerWidth 128) or queuesPerWidth")}},
		{"the fields' maxima", spec(4096, 2, MaxQueueLengthLimit), field.ErrorList{field.Invalid(limitPath,
			int32(MaxQueueLengthLimit), "4096 × 100000 = 409600000 requests may wait per width (819200000 per level)")}},
		{"one queue of the longest length", spec(1, 0, MaxQueueLengthLimit), field.ErrorList{field.Invalid(limitPath,
			int32(MaxQueueLengthLimit), "lower queueLengthLimit (at most 32768 with queuesPerWidth 1)")}},
		{"not judged with queues out of range", spec(5000, 2, 100), field.ErrorList{
			field.Invalid(specPath.Child("queuesPerWidth"), int32(5000), "between 1 and 4096")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			matcher.Test(t, c.want, RequestPrioritySpec(c.spec, specPath))
		})
	}
}
