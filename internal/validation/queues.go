package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// MaxQueuedPerWidth bounds queuesPerWidth × queueLengthLimit: the requests that may wait for
// one request width of one level in one API server. Past a bound like this a level never
// sheds load: with the fields' own maxima (4,096 queues of 100,000) one level could hold 409.6
// million waiting requests, each a goroutine and a request body in kube-apiserver.
//
// Chosen from kube-apiserver's practice: its suggested levels queue at most 128 queues × 50
// (workload-low, global-default: 6,400 waiting requests; the others 64 × 50 or fewer), and the
// operator's own defaults at most 128 × 100 (12,800). 32,768 leaves five times the largest
// suggested level (for example 128 × 256 or 256 × 128). The in-process filter queues the two
// widths (1 for read-only, 2 for mutating requests) apart, so a level holds at most twice
// this there (65,536); a projected level holds at most this (kube-apiserver has one set of
// queues a level).
const MaxQueuedPerWidth = 32_768

// queuedWidths is how many request widths a level queues apart in the in-process filter.
const queuedWidths = 2

// queueCapacity bounds queuesPerWidth × queueLengthLimit at MaxQueuedPerWidth. Either field
// absent or out of its own range is reported by its own check.
func queueCapacity(spec *v1alpha1.RequestPrioritySpec, fldPath *field.Path) field.ErrorList {
	q, l := spec.QueuesPerWidth, spec.QueueLengthLimit
	if q == nil || l == nil || *q < 1 || *q > MaxQueuesPerWidth || *l < 1 || *l > MaxQueueLengthLimit {
		return nil
	}
	queued := int64(*q) * int64(*l)
	if queued <= MaxQueuedPerWidth {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath.Child("queueLengthLimit"), *l, fmt.Sprintf(
		"queuesPerWidth × queueLengthLimit = %d × %d = %d requests may wait per width (%d per level), more than "+
			"%d: a level that holds that many never sheds load; lower queueLengthLimit (at most %d with "+
			"queuesPerWidth %d) or queuesPerWidth (kube-apiserver's suggested levels use 64-128 queues of 50)",
		*q, *l, queued, queued*queuedWidths, MaxQueuedPerWidth, MaxQueuedPerWidth / *q, *q))}
}
