package webhooks

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// countingSink counts WithValues calls reaching the sink.
type countingSink struct {
	logr.LogSink
	withValues *int
}

func (c countingSink) WithValues(kv ...any) logr.LogSink {
	*c.withValues++
	return countingSink{LogSink: c.LogSink.WithValues(kv...), withValues: c.withValues}
}

func (c countingSink) WithName(name string) logr.LogSink {
	return countingSink{LogSink: c.LogSink.WithName(name), withValues: c.withValues}
}

// TestRequestLoggerDefersValues: the request's values reach the sink only with a logged line,
// and then all of them, with the values added later.
func TestRequestLoggerDefersValues(t *testing.T) {
	var lines []string
	calls := 0
	base := logr.New(countingSink{LogSink: funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) },
		funcr.Options{}).GetSink(), withValues: &calls})
	req := &admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "req-1", Name: "tenant-a", Kind: metav1.GroupVersionKind{Group: "flowcontrol.apf-operator.io", Kind: "RequestPriority"},
		UserInfo: authenticationv1.UserInfo{Username: "alice"},
	}}
	log := requestLogger(base.WithName("admission"), req).WithValues("extra", 1)
	if calls != 0 {
		t.Fatalf("%d WithValues calls reached the sink before any line was logged, want 0", calls)
	}
	log.Info("denied")
	if len(lines) != 1 {
		t.Fatalf("logged %d lines, want 1", len(lines))
	}
	for _, want := range []string{"admission", `"name"="tenant-a"`, `"user"="alice"`, `"requestID"="req-1"`,
		`"webhookKind"="RequestPriority"`, `"extra"=1`, "denied"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("logged %q, want it to contain %s", lines[0], want)
		}
	}
	if got := requestLogger(logr.Discard(), req); got.GetSink() != nil {
		t.Error("a discarding base logger: got a sink")
	}
}
