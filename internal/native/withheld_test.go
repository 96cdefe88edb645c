package native_test

import (
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
)

// TestWithheldDefaults: a FlowSchema named in Existing.Withheld is not projected and reports
// ShadowedByNative with the given message; the others are projected as usual.
func TestWithheldDefaults(t *testing.T) {
	rps := defaults.RequestPriorities()[:1] // system-top
	fss := append(defaults.FlowSchemas()[:1], flowSchema("mine", 100, "system-top", nil, flowv1.Conjunction{And: []flowv1.AtomicTest{
		{Equals: &flowv1.ValueTest{Field: flowv1.FieldUser, Value: "alice"}}}}))
	cfg := effective.Compute(rps, fss)
	plan := native.Project(cfg, native.Existing{Withheld: map[string]string{"mine": "because"}})
	if res := plan.FlowSchemaResults["mine"]; res.Projected || res.Reason != flowv1.ReasonShadowedByNative || res.Message != "because" {
		t.Errorf("withheld FlowSchema: %+v", res)
	}
	if res := plan.FlowSchemaResults["system-top"]; !res.Projected {
		t.Errorf("system-top: %+v", res)
	}
	for _, fs := range plan.FlowSchemas {
		if fs.Name == native.NativeName("mine") {
			t.Error("the withheld FlowSchema is in the plan")
		}
	}
}
