package native_test

import (
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
)

// names returns the names of a plan's native objects.
func names(plan *native.Plan) (levels, schemas []string) {
	for _, plc := range plan.PriorityLevels {
		levels = append(levels, plc.Name)
	}
	for _, fs := range plan.FlowSchemas {
		schemas = append(schemas, fs.Name+"@"+fs.Spec.PriorityLevelConfiguration.Name)
	}
	return levels, schemas
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestUnmatched checks what each --native-unmatched choice projects for the native defaults that
// project (system-top; the others are bound or withheld, TestWithheldDefaults), so the implicit backstop workload-low is the only non-zero level) and for
// a user FlowSchema that refers to the backstop level by name.
func TestUnmatched(t *testing.T) {
	set := defaults.Native()
	topRP, topFS := set.RequestPriorities()[:1], set.FlowSchemas()[:1] // system-top: the defaults that project
	nativeDefaults := effective.Compute(topRP, topFS)
	toBackstop := flowSchema("mine", 100, "workload-low", nil, flowv1.Conjunction{And: []flowv1.AtomicTest{
		{Equals: &flowv1.ValueTest{Field: flowv1.FieldUser, Value: "alice"}}}})
	withUser := effective.Compute(topRP, append(topFS, toBackstop))
	for _, tc := range []struct {
		name            string
		cfg             *effective.Config
		unmatched       native.Unmatched
		levels, schemas []string
	}{
		{name: "defaults, kube-apiserver classifies the rest", cfg: nativeDefaults,
			schemas: []string{"apf-system-top@exempt"}},
		{name: "defaults, explicit kube-apiserver", cfg: nativeDefaults, unmatched: native.UnmatchedKubeAPIServer,
			schemas: []string{"apf-system-top@exempt"}},
		{name: "defaults, the operator classifies the rest", cfg: nativeDefaults, unmatched: native.UnmatchedOperator,
			levels:  []string{"apf.workload-low"},
			schemas: []string{"apf-system-top@exempt", "apf.non-top-backstop@apf.workload-low"}},
		{name: "a FlowSchema refers to the backstop level", cfg: withUser,
			levels:  []string{"apf.workload-low"},
			schemas: []string{"apf-mine@apf.workload-low", "apf-system-top@exempt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := native.Project(tc.cfg, native.Existing{Unmatched: tc.unmatched})
			levels, schemas := names(plan)
			if !equal(levels, tc.levels) || !equal(schemas, tc.schemas) {
				t.Errorf("levels %v, schemas %v; want %v, %v", levels, schemas, tc.levels, tc.schemas)
			}
			for name, res := range plan.FlowSchemaResults {
				if !res.Projected {
					t.Errorf("FlowSchema %s not projected: %s", name, res.Message)
				}
			}
			for name, res := range plan.RequestPriorities {
				if !res.Projected {
					t.Errorf("RequestPriority %s not projected: %s", name, res.Message)
				}
			}
		})
	}
	// A backstop level that was projected before (operator mode) and is no longer is stale.
	before := native.Project(nativeDefaults, native.Existing{Unmatched: native.UnmatchedOperator})
	after := native.Project(nativeDefaults, native.Existing{PriorityLevels: before.PriorityLevels, FlowSchemas: before.FlowSchemas})
	if !equal(after.StalePriorityLevels, []string{"apf.workload-low"}) || !equal(after.StaleFlowSchemas, []string{"apf.non-top-backstop"}) {
		t.Errorf("stale after switching to kube-apiserver: %v %v", after.StalePriorityLevels, after.StaleFlowSchemas)
	}
	for _, s := range []string{"kube-apiserver", "operator"} {
		if u, err := native.ParseUnmatched(s); err != nil || string(u) != s {
			t.Errorf("ParseUnmatched(%q) = %q, %v", s, u, err)
		}
	}
	if _, err := native.ParseUnmatched("everyone"); err == nil {
		t.Error("ParseUnmatched accepted everyone")
	}
}
