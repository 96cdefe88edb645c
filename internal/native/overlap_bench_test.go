package native_test

import (
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
)

// BenchmarkIntersect is the webhook's cost per stored FlowSchema at the same matchingPriority:
// a preset-like schema (users listed) against each of the proposal's defaults, whose tests
// take the analysis's several paths (a group, a user negation, patterns).
func BenchmarkIntersect(b *testing.B) {
	preset := flowv1.FlowSchemaSpec{Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{
		{InSet: &flowv1.SetTest{Field: flowv1.FieldUser, Set: []string{
			"system:serviceaccount:argocd:argocd-application-controller",
			"system:serviceaccount:argocd:argocd-applicationset-controller"}}},
	}}}}
	fss := defaults.Proposal().FlowSchemas()
	b.ReportAllocs()
	for b.Loop() {
		for i := range fss {
			native.Intersect(&preset, &fss[i].Spec)
		}
	}
}
