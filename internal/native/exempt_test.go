package native_test

import (
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/native"
)

// exemptAuthorized is fs with the record of exempt rights.
func exemptAuthorized(fs flowv1.FlowSchema) flowv1.FlowSchema {
	fs.Annotations = map[string]string{flowv1.AnnotationExemptAuthorized: "true"}
	return fs
}

// TestProjectionRechecksExemptRights replays the system-top back door in the projection: an
// administrator's level-0 RequestPriority replaces system-top; a tenant's FlowSchema refers to
// the missing system-top (admitted with a warning); the administrator deletes the level-0
// object and the defaults re-create system-top at level 0. Whatever was admitted, the
// projection sends only the FlowSchemas with the record of exempt rights to the exempt level,
// at every projection; the others are ExemptNotAuthorized and written nowhere.
func TestProjectionRechecksExemptRights(t *testing.T) {
	tenant := apitest.And(apitest.Equals(flowv1.FieldUser, "tenant"))
	fss := []flowv1.FlowSchema{
		flowSchema("tenant-top", 100, "system-top", nil, tenant),
		exemptAuthorized(flowSchema("admin-top", 300, "system-top", nil, apitest.And(apitest.Equals(flowv1.FieldUser, "boss")))),
		flowSchema("tenant-queued", 400, "queued", nil, tenant),
	}
	queued := requestPriority("queued", 100, 8, 4)
	record := native.ExemptRecordOf(fss)

	before := native.Project(effective.Compute([]flowv1.RequestPriority{requestPriority("admin-level", 0, 0, 0), queued}, fss),
		native.Existing{ExemptAuthorized: record})
	if res := before.FlowSchemaResults["tenant-top"]; res.Projected {
		t.Errorf("before: tenant-top: %+v, want not projected (system-top does not exist)", res)
	}
	after := native.Project(effective.Compute([]flowv1.RequestPriority{requestPriority("system-top", 0, 0, 0), queued}, fss),
		native.Existing{ExemptAuthorized: record})
	wantExempt(t, "after", after, map[string]bool{"tenant-top": false, "admin-top": true})
	if res := after.FlowSchemaResults["tenant-queued"]; !res.Projected {
		t.Errorf("after: tenant-queued: %+v, want projected (not exempt, no record needed)", res)
	}
	for _, fs := range after.FlowSchemas {
		if fs.Name == native.NativeName("tenant-top") {
			t.Errorf("after: native FlowSchema %s written for a FlowSchema without exempt rights", fs.Name)
		}
	}
}

// TestProjectionWithoutRecordChecksNothing: offline tools (no ExemptRecord) project a level-0
// reference as before: their manifests have no authors.
func TestProjectionWithoutRecordChecksNothing(t *testing.T) {
	fss := []flowv1.FlowSchema{flowSchema("tenant-top", 100, "system-top", nil, apitest.And(apitest.Equals(flowv1.FieldUser, "tenant")))}
	plan := native.Project(effective.Compute([]flowv1.RequestPriority{requestPriority("system-top", 0, 0, 0),
		requestPriority("queued", 100, 8, 4)}, fss), native.Existing{})
	wantExempt(t, "offline", plan, map[string]bool{"tenant-top": true})
}

// wantExempt checks, for each FlowSchema, that it is projected onto the exempt level (true)
// or refused with ReasonExemptNotAuthorized (false).
func wantExempt(t *testing.T, when string, plan *native.Plan, want map[string]bool) {
	t.Helper()
	for name, exempt := range want {
		res := plan.FlowSchemaResults[name]
		switch {
		case exempt && (!res.Projected || !projectsOntoExempt(plan, name)):
			t.Errorf("%s: %s: %+v, want projected onto %s", when, name, res, native.ExemptLevelName)
		case !exempt && (res.Projected || res.Reason != flowv1.ReasonExemptNotAuthorized):
			t.Errorf("%s: %s: %+v, want not projected (%s)", when, name, res, flowv1.ReasonExemptNotAuthorized)
		}
	}
}

// projectsOntoExempt reports whether the plan writes name's native FlowSchema onto exempt.
func projectsOntoExempt(plan *native.Plan, name string) bool {
	for _, fs := range plan.FlowSchemas {
		if fs.Name == native.NativeName(name) {
			return fs.Spec.PriorityLevelConfiguration.Name == native.ExemptLevelName
		}
	}
	return false
}
