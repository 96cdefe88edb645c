package webhooks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// eventRequest is what kube-apiserver sends for a core/v1 event creation in namespace ns by
// user alice.
func eventRequest(raw string, dryRun bool) admission.Request {
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create,
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "events"},
		Namespace: "ns", UserInfo: authenticationv1.UserInfo{Username: "alice"},
		DryRun: ptr.To(dryRun), Object: runtime.RawExtension{Raw: []byte(raw)}}}
}

// TestEventsUnattributedTakeNoToken: reviews that kube-apiserver would never send for an event
// creation (no namespace, no user, another resource, subresource or operation) are admitted,
// charge no bucket and are counted by reason; the attributable creation that follows still
// finds its one token, and the next is refused.
func TestEventsUnattributedTakeNoToken(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := eventratelimit.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	e := eventratelimit.New(clocktesting.NewFakePassiveClock(time.Now()), m)
	e.Update([]eventratelimit.Config{{Name: "one", Generation: 1, Spec: v1alpha1.EventRateLimitSpec{
		Limits: []v1alpha1.EventRateLimitLimit{{Type: v1alpha1.EventRateLimitServer, QPS: 1, Burst: 1}}}}})
	h := &EventRateLimitHandler{Engine: e}
	ev := `{"involvedObject":{"kind":"Pod","name":"p"}}`
	cases := map[string]func(r *admissionv1.AdmissionRequest){
		"no namespace": func(r *admissionv1.AdmissionRequest) { r.Namespace = "" },
		"no user":      func(r *admissionv1.AdmissionRequest) { r.UserInfo.Username = "" },
		"update":       func(r *admissionv1.AdmissionRequest) { r.Operation = admissionv1.Update },
		"pods":         func(r *admissionv1.AdmissionRequest) { r.Resource.Resource = "pods" },
		"other group":  func(r *admissionv1.AdmissionRequest) { r.Resource.Group = "example.com" },
		"subresource":  func(r *admissionv1.AdmissionRequest) { r.SubResource = "status" },
		"events.k8s.io/v1 dry run": func(r *admissionv1.AdmissionRequest) {
			r.Resource.Group, r.DryRun = "events.k8s.io", ptr.To(true)
		},
	}
	for name, mutate := range cases {
		req := eventRequest(ev, false)
		mutate(&req.AdmissionRequest)
		for range 3 {
			if resp := h.Handle(context.Background(), req); !resp.Allowed {
				t.Fatalf("%s: %+v, want admitted", name, resp.Result)
			}
		}
	}
	if c, _ := e.Counts("one"); c.Accepted+c.Rejected != 0 {
		t.Fatalf("unattributed reviews were charged: %+v", c)
	}
	if !h.Handle(context.Background(), eventRequest(ev, false)).Allowed {
		t.Fatal("the bucket must still be full after unattributed reviews")
	}
	if h.Handle(context.Background(), eventRequest(ev, false)).Allowed {
		t.Fatal("the second attributable creation must be refused (burst 1)")
	}
	want := `
# HELP apf_operator_event_rate_limit_skipped_total Admission requests on the events webhook admitted without charging any bucket, by reason (NotEventCreate, DryRun, NoNamespace, NoUser).
# TYPE apf_operator_event_rate_limit_skipped_total counter
apf_operator_event_rate_limit_skipped_total{reason="DryRun"} 3
apf_operator_event_rate_limit_skipped_total{reason="NoNamespace"} 3
apf_operator_event_rate_limit_skipped_total{reason="NoUser"} 3
apf_operator_event_rate_limit_skipped_total{reason="NotEventCreate"} 12
`
	if err := testutil.CollectAndCompare(reg, strings.NewReader(want), "apf_operator_event_rate_limit_skipped_total"); err != nil {
		t.Fatal(err)
	}
}

// TestEventsBothAPIsCharged: creations through core/v1 and events.k8s.io/v1 are both charged.
func TestEventsBothAPIsCharged(t *testing.T) {
	h, e := oneTokenHandler()
	ev := `{"involvedObject":{"kind":"Pod","name":"p"},"source":{"component":"kubelet"}}`
	req := eventRequest(ev, false)
	req.Resource.Group = "events.k8s.io"
	if !h.Handle(context.Background(), req).Allowed || h.Handle(context.Background(), eventRequest(ev, false)).Allowed {
		t.Fatal("the events.k8s.io/v1 creation must take the one token and the core/v1 one be refused")
	}
	if c, _ := e.Counts("one"); c.Accepted != 1 || c.Rejected != 1 {
		t.Fatalf("counts %+v, want 1 accepted and 1 rejected", c)
	}
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
