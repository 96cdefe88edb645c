package webhooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// maxAdmissionBody is controller-runtime's limit on an AdmissionReview body (pkg/webhook/
// admission/http.go, maxRequestSize): 7 MiB. A larger body is answered 413 before decoding.
const maxAdmissionBody = 7 << 20

// fuzzHandlers returns the HTTP handlers of both validating webhooks, built as
// SetupWithManager builds them (admission.WithValidator over the manager's scheme), over a
// fixed set of stored objects, and without panic recovery: a panic fails the test.
func fuzzHandlers(t testing.TB) map[string]http.Handler {
	t.Helper()
	scheme := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	top := &v1alpha1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "top"}}
	objects := validation.NewSet([]*v1alpha1.RequestPriority{top, queuedRP("high", 1000, 64, 6)},
		[]*v1alpha1.FlowSchema{flowSchema("high", "high", nil)})
	access := validation.DefaultExemptAccess("system:serviceaccount:apf-system:apf-operator")
	return map[string]http.Handler{
		"requestpriority": admission.WithValidator(scheme, &RequestPriorityValidator{Objects: objects, Access: access,
			NativeWarnings: true}).WithRecoverPanic(false),
		"flowschema": admission.WithValidator(scheme, &FlowSchemaValidator{Objects: objects, Access: access,
			NativeWarnings: true}).WithRecoverPanic(false),
	}
}

// review returns an AdmissionReview body of the given version for op on kind with the raw
// object (and old object) JSON.
func review(apiVersion, op, kind, object, old string) string {
	raw := func(s string) string {
		if s == "" {
			return "null"
		}
		return s
	}
	return fmt.Sprintf(`{"apiVersion":%q,"kind":"AdmissionReview","request":{"uid":"u-1",`+
		`"kind":{"group":"flowcontrol.apf-operator.io","version":"v1alpha1","kind":%q},`+
		`"resource":{"group":"flowcontrol.apf-operator.io","version":"v1alpha1","resource":"x"},`+
		`"name":"n","operation":%q,"userInfo":{"username":"dev","groups":["developers"]},`+
		`"object":%s,"oldObject":%s}}`, apiVersion, kind, op, raw(object), raw(old))
}

const (
	seedRP = `{"apiVersion":"flowcontrol.apf-operator.io/v1alpha1","kind":"RequestPriority","metadata":{"name":"mid"},` +
		`"spec":{"priorityLevel":5000,"assuredConcurrencyShares":10,"queuesPerWidth":64,"handSize":6,"queueLengthLimit":50}}`
	seedFS = `{"apiVersion":"flowcontrol.apf-operator.io/v1alpha1","kind":"FlowSchema","metadata":{"name":"mid"},` +
		`"spec":{"matchingPriority":10,"requestPriority":{"name":"high"},"match":[{"and":[{"equals":{"field":"user","value":"x"}}]}]}}`
)

// FuzzAdmissionHTTP sends malformed AdmissionReview bodies to the webhooks' HTTP handlers:
// every body must get a well-formed AdmissionReview back, allowing or denying with a code and
// a message, never a panic or a server error. The seeds (run by every `go test`) cover truncated
// JSON, wrong kinds, unknown fields, wrong API versions and invalid objects.
func FuzzAdmissionHTTP(f *testing.F) {
	v1, v1beta1 := "admission.k8s.io/v1", "admission.k8s.io/v1beta1"
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`
	for _, body := range []string{
		review(v1, "CREATE", "RequestPriority", seedRP, ""),
		review(v1beta1, "CREATE", "FlowSchema", seedFS, ""),
		review(v1, "UPDATE", "RequestPriority", seedRP, seedRP),
		review(v1, "DELETE", "RequestPriority", "", `{"metadata":{"name":"top"},"spec":{"priorityLevel":0}}`),
		review(v1, "DELETE", "FlowSchema", "", ""),
		review(v1, "CREATE", "RequestPriority", seedRP[:len(seedRP)/2], ""),
		review(v1, "CREATE", "RequestPriority", "", ""),
		review(v1, "CREATE", "FlowSchema", pod, ""),
		review(v1, "CREATE", "RequestPriority", seedFS, ""),
		review(v1, "CREATE", "RequestPriority", strings.Replace(seedRP, `"spec":{`, `"spec":{"bogus":[1,{"x":null}],`, 1), ""),
		review(v1, "CREATE", "RequestPriority", strings.Replace(seedRP, `5000`, `"5000"`, 1), ""),
		review(v1, "CREATE", "FlowSchema", strings.Replace(seedFS, `"equals"`, `"superSet"`, 1), ""),
		review(v1, "CONNECT", "FlowSchema", seedFS, ""),
		review("admission.k8s.io/v2", "CREATE", "RequestPriority", seedRP, ""),
		review(v1, "CREATE", "RequestPriority", `{"apiVersion":"flowcontrol.apf-operator.io/v9","kind":"RequestPriority"}`, ""),
		review(v1, "CREATE", "RequestPriority", `"a string"`, ""),
		review(v1, "CREATE", "RequestPriority", `[1,2,3]`, ""),
		`{"apiVersion":"v1","kind":"Pod"}`,
		`{"kind":"AdmissionReview"}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":null}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"object":{}}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":`,
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
		"null", "", "\x00\xff", "{}",
	} {
		f.Add(body, "application/json", false)
		f.Add(body, "application/json", true)
	}
	f.Add(review(v1, "CREATE", "RequestPriority", seedRP, ""), "application/yaml", false)
	handlers := fuzzHandlers(f)
	f.Fuzz(func(t *testing.T, body, contentType string, flowSchemaPath bool) {
		h := handlers["requestpriority"]
		if flowSchemaPath {
			h = handlers["flowschema"]
		}
		_, _ = checkAnswer(t, h, strings.NewReader(body), contentType)
	})
}

// checkAnswer sends body to h and checks that the answer is an AdmissionReview that allows the
// request or denies it with a client-error code and a message; it returns the code (200 when
// allowed) and the message.
func checkAnswer(t *testing.T, h http.Handler, body io.Reader, contentType string) (int32, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/validate", body)
	req.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d; want 200 with an AdmissionReview", rec.Code)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
		t.Fatalf("answer is no AdmissionReview (%v): %.300s", err, rec.Body.String())
	}
	res := out.Response
	if res.Allowed {
		return http.StatusOK, ""
	}
	if res.Result == nil || res.Result.Message == "" || res.Result.Code < 400 || res.Result.Code >= 500 {
		t.Fatalf("denial without a client-error code and message: %+v", res.Result)
	}
	return res.Result.Code, res.Result.Message
}

// TestAdmissionBodyLimit checks controller-runtime's body limit as the webhooks serve it: an
// endless body is cut at 7 MiB and answered 413 with bounded allocation, and an object just
// under the limit is decoded and judged (here: denied for its reserved name, not for its size).
func TestAdmissionBodyLimit(t *testing.T) {
	h := fuzzHandlers(t)["requestpriority"]
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	endless := io.MultiReader(strings.NewReader(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"object":{"x":"`),
		&repeatReader{b: 'a', n: 1 << 30})
	if code, msg := checkAnswer(t, h, endless, "application/json"); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 1 GiB body: code %d (%.200s); want 413", code, msg)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*maxAdmissionBody {
		t.Errorf("a 1 GiB body allocated %d MiB; want at most %d MiB (the body limit bounds it)", alloc>>20, 8*maxAdmissionBody>>20)
	}

	big := strings.Replace(seedRP, `"name":"mid"`, `"name":"system-big","annotations":{"a":"`+
		strings.Repeat("x", maxAdmissionBody-2048)+`"}`, 1)
	var buf bytes.Buffer
	buf.WriteString(review("admission.k8s.io/v1", "CREATE", "RequestPriority", big, ""))
	if buf.Len() >= maxAdmissionBody {
		t.Fatalf("test body %d bytes, want under the limit", buf.Len())
	}
	code, msg := checkAnswer(t, h, &buf, "application/json")
	if code != http.StatusUnprocessableEntity || !strings.Contains(msg, `names starting with "system-" are reserved`) {
		t.Errorf("a %d MiB object with a reserved name: code %d (%.200s); want 422 for the name (judged, not cut)",
			maxAdmissionBody>>20, code, msg)
	}
}

// repeatReader yields n copies of b without holding them in memory.
type repeatReader struct {
	b byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = r.b
	}
	r.n -= k
	return k, nil
}
