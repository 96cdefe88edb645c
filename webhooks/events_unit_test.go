package webhooks

import (
	"context"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/eventratelimit"
)

func oneTokenHandler() (*EventRateLimitHandler, *eventratelimit.Engine) {
	e := eventratelimit.New(clocktesting.NewFakePassiveClock(time.Now()), nil)
	e.Update([]eventratelimit.Config{{Name: "one", Generation: 1, Spec: v1alpha1.EventRateLimitSpec{
		Limits: []v1alpha1.EventRateLimitLimit{{Type: v1alpha1.EventRateLimitSourceAndObject, QPS: 1, Burst: 1}}}}})
	return &EventRateLimitHandler{Engine: e}, e
}

func eventRequest(raw string, dryRun bool) admission.Request {
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create,
		Namespace: "ns", DryRun: ptr.To(dryRun), Object: runtime.RawExtension{Raw: []byte(raw)}}}
}

// TestEventsDryRunTakesNoToken: dry-run creations are admitted and charge nothing.
func TestEventsDryRunTakesNoToken(t *testing.T) {
	h, e := oneTokenHandler()
	ev := `{"involvedObject":{"kind":"Pod","name":"p"},"source":{"component":"kubelet"}}`
	for range 3 {
		if !h.Handle(context.Background(), eventRequest(ev, true)).Allowed {
			t.Fatal("a dry run must be admitted")
		}
	}
	if c, _ := e.Counts("one"); c.Accepted+c.Rejected != 0 {
		t.Fatalf("dry runs were counted: %+v", c)
	}
	if !h.Handle(context.Background(), eventRequest(ev, false)).Allowed {
		t.Fatal("the bucket must still be full after dry runs")
	}
	resp := h.Handle(context.Background(), eventRequest(ev, false))
	if resp.Allowed || resp.Result.Code != 429 || resp.Result.Details.RetryAfterSeconds != 1 {
		t.Fatalf("second creation: %+v, want 429 with retryAfterSeconds 1", resp.Result)
	}
}

// TestEventsUndecodableEventAdmitted: an event the webhook cannot read is admitted with a
// warning rather than lost.
func TestEventsUndecodableEventAdmitted(t *testing.T) {
	h, _ := oneTokenHandler()
	resp := h.Handle(context.Background(), eventRequest(`{"involvedObject": 5}`, false))
	if !resp.Allowed || len(resp.Warnings) != 1 {
		t.Fatalf("response %+v, want admitted with one warning", resp)
	}
}

// TestSourceAndObjectKeyAcrossAPIs: the same event reads the same key in core/v1 and
// events.k8s.io/v1 form; another object or reporter reads another.
func TestSourceAndObjectKeyAcrossAPIs(t *testing.T) {
	core := `{"reportingComponent":"kubelet","reportingInstance":"n1","source":{"component":"kubelet","host":"n1"},
		"involvedObject":{"apiVersion":"v1","kind":"Pod","namespace":"ns","name":"p","uid":"u"}}`
	events := `{"reportingController":"kubelet","reportingInstance":"n1","deprecatedSource":{"component":"kubelet","host":"n1"},
		"regarding":{"apiVersion":"v1","kind":"Pod","namespace":"ns","name":"p","uid":"u"}}`
	legacy := `{"source":{"component":"kubelet","host":"n1"},"involvedObject":{"apiVersion":"v1","kind":"Pod","namespace":"ns","name":"p","uid":"u"}}`
	other := `{"reportingController":"kubelet","reportingInstance":"n1","regarding":{"apiVersion":"v1","kind":"Pod","namespace":"ns","name":"q","uid":"u"}}`
	keys := map[string]string{}
	for name, raw := range map[string]string{"core": core, "events": events, "legacy": legacy, "other": other} {
		k, err := sourceAndObjectKey([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		keys[name] = k
	}
	if keys["core"] != keys["events"] || keys["core"] != keys["legacy"] {
		t.Fatalf("one event keys differently across APIs: %q", keys)
	}
	if keys["other"] == keys["core"] {
		t.Fatal("another object must key differently")
	}
}
