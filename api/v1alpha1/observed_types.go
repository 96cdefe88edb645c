package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ObservedTraffic is a bounded summary of what kube-apiserver's own flow control did with the
// requests of the native object this object is projected onto, read by the operator's leader
// from kube-apiserver's /metrics (apiserver_flowcontrol_rejected_requests_total). The operator
// recomputes it at most once a minute and writes it only when the count changed, so an idle
// cluster sees no status writes. Several kube-apiserver replicas each count their own
// requests: the count is that of the replica that answered the read.
type ObservedTraffic struct {
	// rejectedLast5m is how many requests kube-apiserver rejected with HTTP 429 (queue full,
	// time-out in the queue, concurrency limit, cancelled while queued) in the 5 minutes before
	// windowEnd; in the first 5 minutes after the operator's leader started, since then.
	// +kubebuilder:validation:Minimum=0
	RejectedLast5m int64 `json:"rejectedLast5m"`

	// windowEnd is when kube-apiserver's counter was read for this count.
	WindowEnd metav1.Time `json:"windowEnd"`
}
