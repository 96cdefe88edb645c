package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native/worstcase"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// maxAdmissionAlloc bounds what admitting one FlowSchema may allocate, decode included.
const maxAdmissionAlloc = 64 << 20

// boundedHook is the FlowSchema webhook as the manager registers it (native warnings on), over
// stored objects holding the RequestPriority the worst cases refer to.
func boundedHook(tb testing.TB) *admission.Webhook {
	tb.Helper()
	scheme := k8sruntime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		tb.Fatal(err)
	}
	objects := validation.NewSet([]*v1alpha1.RequestPriority{queuedRP("target", 1000, 64, 6)}, nil)
	return flowSchemaWebhook(scheme, &FlowSchemaValidator{Objects: objects,
		Access: validation.DefaultExemptAccess(), NativeWarnings: true}).WithRecoverPanic(false)
}

// createRequest is the admission request of a create of obj by a user outside the exempt groups.
func createRequest(tb testing.TB, obj *v1alpha1.FlowSchema) admission.Request {
	tb.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		tb.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "bounded", Operation: admissionv1.Create,
		Object: k8sruntime.RawExtension{Raw: raw}, UserInfo: authenticationv1.UserInfo{Username: "dev", Groups: []string{"developers"}}}}
}

// admissionAlloc returns what one admission of req allocates and the response.
func admissionAlloc(hook *admission.Webhook, req admission.Request) (uint64, admission.Response) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp := hook.Handle(context.Background(), req)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, resp
}

// TestWorstCaseAdmissionBounded admits every adversarial FlowSchema through the webhook's
// handler (decode, validation against the stored objects, exempt checks, native warnings) and
// checks that each allocates less than 64 MiB (TotalAlloc, not a time) and is either denied
// with a field path or allowed with a NotExpressible warning naming one (the realistic large
// case: allowed without one).
func TestWorstCaseAdmissionBounded(t *testing.T) {
	hook := boundedHook(t)
	for _, c := range worstcase.FlowSchemas("target") {
		t.Run(c.Name, func(t *testing.T) {
			req := createRequest(t, c.FlowSchema())
			alloc, resp := admissionAlloc(hook, req)
			t.Logf("%s: %d KiB object, %d KiB allocated, allowed=%v, %d warnings", c.Stress, len(req.Object.Raw)>>10,
				alloc>>10, resp.Allowed, len(resp.Warnings))
			if alloc > maxAdmissionAlloc {
				t.Errorf("admission allocated %d MiB; want under %d MiB", alloc>>20, maxAdmissionAlloc>>20)
			}
			switch {
			case c.Expressible && (!resp.Allowed || len(resp.Warnings) > 0):
				t.Errorf("realistic case: allowed=%v %v %v; want allowed without warnings", resp.Allowed, resp.Result, resp.Warnings)
			case c.Expressible:
			case !resp.Allowed && len(req.Object.Raw) > MaxFlowSchemaBytes:
				if resp.Result.Code != http.StatusRequestEntityTooLarge || alloc > 1<<20 {
					t.Errorf("oversized object: code %d, %d KiB allocated; want 413 before decoding: %s",
						resp.Result.Code, alloc>>10, resp.Result.Message)
				}
			case !resp.Allowed && !strings.Contains(resp.Result.Message, "spec.match["):
				t.Errorf("denied without a field path: %s", resp.Result.Message)
			case !resp.Allowed:
				t.Logf("denied: %.300s", resp.Result.Message)
			case len(resp.Warnings) == 0 || !strings.Contains(resp.Warnings[0], "spec.match["):
				t.Errorf("allowed without a NotExpressible warning naming a field: %v", resp.Warnings)
			default:
				t.Logf("warning: %.300s", resp.Warnings[0])
			}
		})
	}
}

// BenchmarkWorstCaseAdmission measures the webhook's handler on every adversarial FlowSchema
// (run with -benchmem for B/op), and controller-runtime's decoding of the same object alone,
// the floor under the handler's figure.
func BenchmarkWorstCaseAdmission(b *testing.B) {
	hook := boundedHook(b)
	scheme := k8sruntime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	decoder := admission.NewDecoder(scheme)
	for _, c := range worstcase.FlowSchemas("target") {
		req := createRequest(b, c.FlowSchema())
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			b.ReportMetric(float64(len(req.Object.Raw)), "object-bytes")
			start := cpuTime()
			for b.Loop() {
				hook.Handle(context.Background(), req)
			}
			b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
		b.Run(c.Name+"/decode-only", func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime()
			for b.Loop() {
				if err := decoder.DecodeRaw(req.Object, &v1alpha1.FlowSchema{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU time the process used so far (user and system): on a loaded machine it
// measures the work of an operation where the wall time also counts the waits for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// FuzzFlowSchemaBounded admits FlowSchemas built from fuzzed patterns and values, repeated over
// up to 64 conjunctions of up to 32 tests (the CRD's bounds), through the webhook's handler: no
// panic, and less than 64 MiB allocated per admission. The seeds are the adversarial shapes:
// nested repetitions, large and folded classes, many alternations, long literals.
func FuzzFlowSchemaBounded(f *testing.F) {
	for _, s := range []struct {
		p1, p2, value string
		conj, tests   uint8
		fields        uint8
	}{
		{"x{1000}[a-p][a-p]", "x{1000}[a-p][a-p]", "", 64, 2, 0x34},
		{"((a|b){8}){2}", "((a|b|c|d){4}){1,2}", "pods", 64, 32, 0x45},
		{`[\x00-\x{10FFFF}]{1000}`, `(?i)[\pL\pN\pS]{1,1000}`, strings.Repeat("x", 1024), 64, 32, 0x13},
		{"(a0|a1|a2|a3|a4|a5|a6|a7|a8|a9)(b0|b1|b2|b3|b4|b5|b6|b7|b8|b9)", "(a?){1000}", "a", 64, 32, 0x30},
		{"x{1000}[a-p]", `(?i)\pL\pL\pL\pL\pL{1,1000}`, strings.Repeat("y", 1000), 64, 32, 0x33},
		{"/healthz(/.*)?", "/apis/.*", "/healthz", 1, 2, 0x88},
	} {
		f.Add(s.p1, s.p2, s.value, s.conj, s.tests, s.fields)
	}
	hook := boundedHook(f)
	f.Fuzz(func(t *testing.T, p1, p2, value string, conj, tests, fields uint8) {
		fs := fuzzedFlowSchema(p1, p2, value, int(conj)%64+1, int(tests)%32+1, fields)
		req := createRequest(t, fs)
		if alloc, _ := admissionAlloc(hook, req); alloc > maxAdmissionAlloc {
			t.Fatalf("admission of %d conjunctions × %d tests (%q, %q) allocated %d MiB; want under %d MiB",
				len(fs.Spec.Match), len(fs.Spec.Match[0].And), p1, p2, alloc>>20, maxAdmissionAlloc>>20)
		}
	})
}

// fuzzedFlowSchema builds conj conjunctions of tests tests: patternMatch p1 and p2, and
// notPatternMatch p2 and an inSet of 256 copies of value after them, on the scalar fields the
// two nibbles of fields pick.
func fuzzedFlowSchema(p1, p2, value string, conj, tests int, fields uint8) *v1alpha1.FlowSchema {
	scalar := []v1alpha1.RequestField{v1alpha1.FieldUser, v1alpha1.FieldVerb, v1alpha1.FieldAPIGroup, v1alpha1.FieldResource,
		v1alpha1.FieldSubresource, v1alpha1.FieldNamespace, v1alpha1.FieldName, v1alpha1.FieldPath}
	f1, f2 := scalar[int(fields>>4)%len(scalar)], scalar[int(fields&15)%len(scalar)]
	set := make([]string, 256)
	for i := range set {
		set[i] = fmt.Sprintf("%s%d", value, i)
	}
	and := []v1alpha1.AtomicTest{
		{PatternMatch: &v1alpha1.PatternTest{Field: f1, Pattern: p1}},
		{PatternMatch: &v1alpha1.PatternTest{Field: f2, Pattern: p2}},
		{InSet: &v1alpha1.SetTest{Field: f2, Set: set}},
	}
	for len(and) < tests {
		and = append(and, v1alpha1.AtomicTest{NotPatternMatch: &v1alpha1.PatternTest{Field: f2, Pattern: p2}})
	}
	fs := flowSchema("fuzzed", "target", nil)
	fs.Spec.Match = make([]v1alpha1.Conjunction, conj)
	for i := range fs.Spec.Match {
		fs.Spec.Match[i].And = and[:tests]
	}
	return fs
}
