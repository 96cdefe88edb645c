package eventratelimit

import (
	"strconv"
	"testing"

	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// BenchmarkAdmit measures one admission decision with all four limit types configured and
// keys spread over 1,000 namespaces, users and objects (each within its cache), on the real
// clock: the engine's share of the events webhook's latency.
func BenchmarkAdmit(b *testing.B) {
	e := New(clock.RealClock{}, nil)
	e.Update([]Config{{Name: "all", Generation: 1, Spec: v1alpha1.EventRateLimitSpec{Limits: []v1alpha1.EventRateLimitLimit{
		{Type: v1alpha1.EventRateLimitServer, QPS: 1 << 30, Burst: 1 << 30},
		{Type: v1alpha1.EventRateLimitNamespace, QPS: 1 << 30, Burst: 1 << 30, CacheSize: ptr.To[int32](4096)},
		{Type: v1alpha1.EventRateLimitUser, QPS: 1 << 30, Burst: 1 << 30, CacheSize: ptr.To[int32](4096)},
		{Type: v1alpha1.EventRateLimitSourceAndObject, QPS: 1 << 30, Burst: 1 << 30, CacheSize: ptr.To[int32](4096)},
	}}}})
	attrs := make([]Attributes, 1000)
	for i := range attrs {
		n := strconv.Itoa(i)
		attrs[i] = Attributes{Namespace: "ns-" + n, User: "system:serviceaccount:ns-" + n + ":sa",
			SourceAndObject: SourceAndObjectKey(Source{Component: "kubelet", Host: "node-" + n},
				Object{APIVersion: "v1", Kind: "Pod", Namespace: "ns-" + n, Name: "pod-" + n, UID: n})}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if !e.Admit(&attrs[i%len(attrs)]).Allowed {
			b.Fatal("rejected")
		}
	}
}
