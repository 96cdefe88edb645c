package presets_test

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// typed converts rendered manifests into RequestPriority and FlowSchema objects.
func typed(t testing.TB, objs []*unstructured.Unstructured) ([]flowv1.RequestPriority, []flowv1.FlowSchema) {
	t.Helper()
	var rps []flowv1.RequestPriority
	var fss []flowv1.FlowSchema
	for _, o := range objs {
		switch o.GetKind() {
		case "RequestPriority":
			var rp flowv1.RequestPriority
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, &rp, true); err != nil {
				t.Fatalf("%s: %v", o.GetName(), err)
			}
			rps = append(rps, rp)
		case "FlowSchema":
			var fs flowv1.FlowSchema
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, &fs, true); err != nil {
				t.Fatalf("%s: %v", o.GetName(), err)
			}
			fss = append(fss, fs)
		}
	}
	return rps, fss
}

// TestPresetsValidateAndProject: with every preset enabled beside the native defaults (what
// `apf-operator validate --target native` checks), every object passes validation without a
// warning, no two preset FlowSchemas overlap at one matchingPriority, and every object is
// projected exactly within the default share budget.
func TestPresetsValidateAndProject(t *testing.T) {
	rps, fss := typed(t, renderPresets(t, allEnabled()...))
	if len(fss) != len(presetKeys) || len(rps) != 2 {
		t.Fatalf("rendered %d FlowSchemas and %d RequestPriorities; want %d and 2", len(fss), len(rps), len(presetKeys))
	}
	rps = append(rps, defaults.Native().RequestPriorities()...)
	fss = append(fss, defaults.Native().FlowSchemas()...)
	var rpPtrs []*flowv1.RequestPriority
	var fsPtrs []*flowv1.FlowSchema
	for i := range rps {
		rpPtrs = append(rpPtrs, &rps[i])
	}
	for i := range fss {
		fsPtrs = append(fsPtrs, &fss[i])
	}
	set := validation.NewSet(rpPtrs, fsPtrs)
	ctx := context.Background()
	for _, rp := range rpPtrs {
		errs, warnings, err := validation.RequestPriority(ctx, nil, rp, set)
		if err != nil || len(errs) > 0 || len(warnings) > 0 {
			t.Errorf("RequestPriority %s: errors %v, warnings %v, %v", rp.Name, errs, warnings, err)
		}
	}
	for _, fs := range fsPtrs {
		errs, warnings, err := validation.FlowSchema(ctx, nil, fs, set)
		if err != nil || len(errs) > 0 || len(warnings) > 0 {
			t.Errorf("FlowSchema %s: errors %v, warnings %v, %v", fs.Name, errs, warnings, err)
		}
	}
	if overlaps := validation.Overlaps(fsPtrs, native.Intersect); len(overlaps) > 0 {
		t.Errorf("overlaps among presets: %v", overlaps)
	}
	// As the operator projects on a stock cluster: kube-apiserver's levels present (the bound
	// defaults name them), the operator's default FlowSchemas that would move traffic withheld.
	withheld := defaults.Withheld(fss)
	plan := native.Project(effective.Compute(rps, fss), native.Existing{
		PriorityLevels: nativeview.BootstrapObjects().PriorityLevels, Withheld: withheld})
	for _, rp := range rps {
		if r := plan.RequestPriorities[rp.Name]; !r.Projected {
			t.Errorf("RequestPriority %s not projected: %s %s", rp.Name, r.Reason, r.Message)
		}
	}
	for _, fs := range fss {
		if r := plan.FlowSchemaResults[fs.Name]; !r.Projected && withheld[fs.Name] == "" {
			t.Errorf("FlowSchema %s not projected: %s %s", fs.Name, r.Reason, r.Message)
		}
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
