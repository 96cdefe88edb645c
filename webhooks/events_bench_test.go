package webhooks

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
)

// BenchmarkEventRateLimitHandle measures the events webhook's decision on one decoded
// admission request (what runs on every event creation after controller-runtime has decoded
// the AdmissionReview): all four limit types, so the event's source and object are decoded too.
// Keys rotate over 1,000 namespaces, users and objects.
func BenchmarkEventRateLimitHandle(b *testing.B) {
	const big = 1 << 30
	engine := eventratelimit.New(clock.RealClock{}, nil)
	engine.Update([]eventratelimit.Config{{Name: "all", Generation: 1, Spec: v1alpha1.EventRateLimitSpec{Limits: []v1alpha1.EventRateLimitLimit{
		{Type: v1alpha1.EventRateLimitServer, QPS: big, Burst: big},
		{Type: v1alpha1.EventRateLimitNamespace, QPS: big, Burst: big},
		{Type: v1alpha1.EventRateLimitUser, QPS: big, Burst: big},
		{Type: v1alpha1.EventRateLimitSourceAndObject, QPS: big, Burst: big},
	}}}})
	h := &EventRateLimitHandler{Engine: engine}
	reqs := make([]admission.Request, 1000)
	for i := range reqs {
		n := strconv.Itoa(i)
		raw, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Event",
			"metadata":       map[string]any{"name": "pod-" + n + ".1", "namespace": "ns-" + n},
			"involvedObject": map[string]any{"apiVersion": "v1", "kind": "Pod", "namespace": "ns-" + n, "name": "pod-" + n, "uid": "uid-" + n},
			"reason":         "BackOff", "message": "Back-off restarting failed container", "type": "Warning",
			"source": map[string]any{"component": "kubelet", "host": "node-" + n}, "reportingComponent": "kubelet", "reportingInstance": "node-" + n})
		reqs[i] = admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create,
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "events"}, Namespace: "ns-" + n, UserInfo: authenticationv1.UserInfo{Username: "system:node:node-" + n},
			Object: runtime.RawExtension{Raw: raw}}}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if !h.Handle(ctx, reqs[i%len(reqs)]).Allowed {
			b.Fatal("rejected")
		}
	}
	b.StopTimer()
	if c, _ := engine.Counts("all"); c.Accepted == 0 {
		b.Fatal("no creation was charged: the benchmark measured the skip path")
	}
}
