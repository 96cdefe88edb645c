package webhooks

import (
	"context"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
)

// FuzzEventsHandle: whatever a caller posts (any operation, resource, namespace, user and
// body), the events webhook answers without panicking; a review that is not an attributable
// event creation is admitted and charges no bucket; anything it rejects is a 429.
func FuzzEventsHandle(f *testing.F) {
	f.Add("CREATE", "", "events", "", "ns", "alice", []byte(`{"involvedObject":{"kind":"Pod","name":"p"}}`))
	f.Add("CREATE", "events.k8s.io", "events", "", "ns", "", []byte(`{"regarding":{"kind":"Pod"}}`))
	f.Add("UPDATE", "", "events", "", "", "bob", []byte(`{`))
	f.Add("CREATE", "", "pods", "status", "ns", "alice", []byte(`null`))
	f.Fuzz(func(t *testing.T, op, group, resource, sub, ns, user string, raw []byte) {
		e := eventratelimit.New(clocktesting.NewFakePassiveClock(time.Now()), nil)
		e.Update([]eventratelimit.Config{{Name: "all", Generation: 1, Spec: v1alpha1.EventRateLimitSpec{Limits: []v1alpha1.EventRateLimitLimit{
			{Type: v1alpha1.EventRateLimitServer, QPS: 1, Burst: 1},
			{Type: v1alpha1.EventRateLimitSourceAndObject, QPS: 1, Burst: 1},
		}}}})
		h := &EventRateLimitHandler{Engine: e}
		req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Operation(op),
			Resource: metav1.GroupVersionResource{Group: group, Version: "v1", Resource: resource}, SubResource: sub,
			Namespace: ns, UserInfo: authenticationv1.UserInfo{Username: user}, Object: runtime.RawExtension{Raw: raw}}}
		attributable := op == "CREATE" && resource == "events" && sub == "" && (group == "" || group == "events.k8s.io") &&
			ns != "" && user != ""
		for range 2 {
			resp := h.Handle(context.Background(), req)
			if !resp.Allowed && (!attributable || resp.Result == nil || resp.Result.Code != 429) {
				t.Fatalf("review (attributable %v) answered %+v", attributable, resp.Result)
			}
		}
		if c, _ := e.Counts("all"); !attributable && c.Accepted+c.Rejected != 0 {
			t.Fatalf("an unattributable review was charged: %+v", c)
		}
	})
}
