package native_test

import (
	"runtime"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/worstcase"
)

// maxAnalysisAlloc is the bound on what the analysis of one object may allocate.
const maxAnalysisAlloc = 64 << 20

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc; deterministic up to the
// runtime's own small allocations, unlike a time).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// worstCaseReasons are the budgets each adversarial FlowSchema runs into first (a part of the
// first error's message).
var worstCaseReasons = map[string]string{
	"worst-pattern-pair":     "accepts more than 256 values or 64 KiB",
	"worst-pattern-pair-64":  "accepts more than 256 values or 64 KiB",
	"worst-cross-product-64": "would list 256 resource/subresource pairs",
	"worst-nested-groups":    "accepts more than 256 values or 64 KiB",
	"worst-distinct-classes": "analysis budget of 16 MiB",
	"worst-evaluation":       "evaluation budget",
	"worst-long-literals":    "would list 65,536 resource/subresource pairs (128 MiB)",
	"worst-users-64":         "would list more than 8,192 values",
}

// TestWorstCasesBounded checks every adversarial FlowSchema: MatchErrors (what the webhook
// warns with) allocates less than 64 MiB and reports it NotExpressible with the path of a
// conjunction, except the realistic large one, which stays expressible.
func TestWorstCasesBounded(t *testing.T) {
	for _, c := range worstcase.FlowSchemas("target") {
		t.Run(c.Name, func(t *testing.T) {
			var errs []string
			alloc := allocated(func() {
				for _, e := range native.MatchErrors(&c.Spec) {
					errs = append(errs, e.Error())
				}
			})
			t.Logf("%s: %d KiB allocated, %d errors", c.Stress, alloc>>10, len(errs))
			if alloc > maxAnalysisAlloc {
				t.Errorf("MatchErrors allocated %d MiB; want under %d MiB", alloc>>20, maxAnalysisAlloc>>20)
			}
			switch {
			case c.Expressible && len(errs) > 0:
				t.Errorf("the realistic case is not expressible: %v", errs[0])
			case !c.Expressible && len(errs) == 0:
				t.Errorf("not reported NotExpressible")
			case !c.Expressible && !strings.HasPrefix(errs[0], "spec.match["):
				t.Errorf("first error has no conjunction path: %s", errs[0])
			}
			if len(errs) > 0 {
				t.Logf("first error: %.400s", errs[0])
			}
			if want := worstCaseReasons[c.Name]; want != "" && (len(errs) == 0 || !strings.Contains(errs[0], want)) {
				t.Errorf("first error %.300q; want it to say %q", errs, want)
			}
		})
	}
}

// TestProjectWorstCasesTogether projects every adversarial FlowSchema in one configuration,
// the leader's situation once they are stored: each is NotExpressible with a field path (the
// realistic one projected), and the projection as a whole allocates less than 64 MiB, since it
// holds one object's expansion at a time.
func TestProjectWorstCasesTogether(t *testing.T) {
	rp := flowv1.RequestPriority{Spec: flowv1.RequestPrioritySpec{PriorityLevel: 1000,
		AssuredConcurrencyShares: ptr.To[int32](10), QueuesPerWidth: ptr.To[int32](64), HandSize: ptr.To[int32](6),
		QueueLengthLimit: ptr.To[int32](50)}}
	rp.Name = "target"
	var fss []flowv1.FlowSchema
	cases := worstcase.FlowSchemas("target")
	for _, c := range cases {
		fss = append(fss, *c.FlowSchema())
	}
	cfg := effective.Compute([]flowv1.RequestPriority{rp}, fss)
	var plan *native.Plan
	alloc := allocated(func() { plan = native.Project(cfg, native.Existing{}) })
	t.Logf("Project over %d adversarial FlowSchemas: %d KiB allocated", len(cases), alloc>>10)
	if alloc > maxAnalysisAlloc {
		t.Errorf("Project allocated %d MiB; want under %d MiB", alloc>>20, maxAnalysisAlloc>>20)
	}
	for _, c := range cases {
		res, ok := plan.FlowSchemaResults[c.Name]
		switch {
		case !ok:
			t.Errorf("%s: no result", c.Name)
		case c.Expressible && !res.Projected:
			t.Errorf("%s: %s %s; want projected", c.Name, res.Reason, res.Message)
		case c.Expressible:
		case res.Reason == flowv1.ReasonInvalidSpec || !cfg.FlowSchemaStatus[c.Name].InEffect:
			t.Logf("%s: not in effect (%s), so not projected", c.Name, cfg.FlowSchemaStatus[c.Name].Reason)
		case res.Reason != flowv1.ReasonNotExpressible || len(res.Errors) == 0 ||
			!strings.HasPrefix(res.Errors[0].Field, "spec.match["):
			t.Errorf("%s: %s %v; want NotExpressible with a spec.match path", c.Name, res.Reason, res.Errors)
		}
	}
}
