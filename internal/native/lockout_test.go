package native_test

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/native/nativetest"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// TestProjectionNeverShadowsExempt: however eagerly the FlowSchemas match (matchingPriority 0,
// every request, the masters group itself), the projection writes no FlowSchema that could come
// before kube-apiserver's mandatory exempt (precedence 1, name "exempt"), so a system:masters
// request is classified natively by exempt, as our classifier sends it to the implicit
// system-top at the exempt level, and everyone else by the projected grab-all.
func TestProjectionNeverShadowsExempt(t *testing.T) {
	masters := apitest.And(apitest.SuperSet(effective.MastersGroup))
	cfg := effective.Compute(
		[]flowv1.RequestPriority{requestPriority("one-seat", 100, 1, 0), requestPriority("admins", 0, 0, 0)},
		[]flowv1.FlowSchema{
			flowSchema("grab-all", 0, "one-seat", nil, apitest.And()),
			flowSchema("masters-exempt", 0, "admins", nil, masters),
			flowSchema("masters-queued", 0, "one-seat", nil, masters),
		})
	plan := native.Project(cfg, native.Existing{})
	for _, fs := range plan.FlowSchemas {
		if fs.Spec.MatchingPrecedence <= 1 || fs.Name == flowcontrolv1.FlowSchemaNameExempt {
			t.Errorf("projected FlowSchema %s at precedence %d could shadow kube-apiserver's exempt", fs.Name,
				fs.Spec.MatchingPrecedence)
		}
	}
	if res := plan.FlowSchemaResults["masters-queued"]; res.Projected || res.Reason != flowv1.ReasonNotInEffect {
		t.Errorf("masters-queued: %+v, want not projected (%s)", res, flowv1.ReasonNotInEffect)
	}
	kube := nativetest.Start(t, append(bootstrapset.PriorityLevels(), plan.PriorityLevels...),
		append(bootstrapset.FlowSchemas(), plan.FlowSchemas...))
	defer kube.Close()
	classifier := classify.Compile(cfg)
	for _, tc := range []struct {
		a          request.Attributes
		ours, them string
	}{
		{request.Attributes{User: "root", Groups: []string{effective.MastersGroup}, Verb: "delete", Resource: "flowschemas",
			APIGroup: flowv1.GroupVersion.Group, Name: "grab-all", ResourceRequest: true}, effective.BackstopExemptName,
			flowcontrolv1.FlowSchemaNameExempt},
		{request.Attributes{User: "alice", Groups: []string{"system:authenticated"}, Verb: "get", Resource: "configmaps",
			Namespace: "a", ResourceRequest: true}, "grab-all", native.NativeName("grab-all")},
	} {
		var got classify.Result
		classifier.Classify(&tc.a, &got)
		if got.Schema.Name != tc.ours || got.Schema.Priority.Exempt() != (tc.ours == effective.BackstopExemptName) {
			t.Errorf("%s: our classifier picks %s at %s, want %s", tc.a.User, got.Schema.Name, got.Schema.Priority.Name, tc.ours)
		}
		if picked := kube.Pick(&tc.a); picked != tc.them {
			t.Errorf("%s: kube-apiserver picks %s, want %s", tc.a.User, picked, tc.them)
		}
	}
}
