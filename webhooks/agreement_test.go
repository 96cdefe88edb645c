package webhooks

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// rejectedBy says which layer of the API server must reject a spec that the Go rules reject.
type rejectedBy int

const (
	accepted    rejectedBy = iota // valid for both
	crd                           // the CRD's OpenAPI bounds or CEL rules (hold while the webhook is down)
	webhookOnly                   // rules CEL cannot express: hand-size limit, RE2, capturing groups, names
)

// TestCRDAndGoRulesAgree sends specs through the real API server (dry run) and checks that the
// CRD's schema and CEL rules and the Go rules agree: what Go accepts the API server accepts;
// what Go rejects the CRD rejects by itself, except the rules only the webhook can check.
func TestCRDAndGoRulesAgree(t *testing.T) {
	s := envSuite(t)
	for _, c := range requestPriorityAgreementCases() {
		t.Run("RequestPriority/"+c.name, func(t *testing.T) {
			rp := &v1alpha1.RequestPriority{Spec: c.spec}
			rp.Name = "it-agree"
			goErrs := validation.RequestPrioritySpec(&rp.Spec, field.NewPath("spec"))
			checkAgreement(t, s, rp, goErrs, c.want)
		})
	}
	for _, c := range flowSchemaAgreementCases() {
		t.Run("FlowSchema/"+c.name, func(t *testing.T) {
			fs := &v1alpha1.FlowSchema{Spec: c.spec}
			fs.Name = "it-agree"
			goErrs, _ := validation.FlowSchemaSpec(&fs.Spec, field.NewPath("spec"))
			checkAgreement(t, s, fs, goErrs, c.want)
		})
	}
}

func checkAgreement(t *testing.T, s *suite, obj client.Object, goErrs field.ErrorList, want rejectedBy) {
	t.Helper()
	if (len(goErrs) == 0) != (want == accepted) {
		t.Fatalf("Go rules: %v; case expects rejected=%v", goErrs, want != accepted)
	}
	err := s.admin.Create(context.Background(), obj, client.DryRunAll)
	fromWebhook := err != nil && strings.Contains(err.Error(), "admission webhook")
	switch {
	case want == accepted && err != nil:
		t.Fatalf("Go accepts but the API server rejects: %v", err)
	case want == crd && (err == nil || fromWebhook):
		t.Fatalf("the CRD must reject by itself what Go rejects (%v); API server: %v", goErrs, err)
	case want == webhookOnly && !fromWebhook:
		t.Fatalf("want the webhook to reject (%v); API server: %v", goErrs, err)
	}
}

type rpCase struct {
	name string
	spec v1alpha1.RequestPrioritySpec
	want rejectedBy
}

func requestPriorityAgreementCases() []rpCase {
	q := func(level int32, shares, queues, hand, limit *int32) v1alpha1.RequestPrioritySpec {
		return v1alpha1.RequestPrioritySpec{PriorityLevel: level, AssuredConcurrencyShares: shares,
			QueuesPerWidth: queues, HandSize: hand, QueueLengthLimit: limit}
	}
	n := ptr.To[int32]
	return append([]rpCase{
		{"valid queued", q(6100, n(10), n(64), n(6), n(50)), accepted},
		{"valid single queue", q(6100, n(0), n(1), nil, n(1)), accepted},
		{"valid largest hand", q(6100, n(10), n(64), n(10), n(50)), accepted},
		{"negative level", q(-1, n(10), n(64), n(6), n(50)), crd},
		{"level above range", q(1_000_000_001, n(10), n(64), n(6), n(50)), crd},
		{"exempt with shares", q(0, n(10), nil, nil, nil), crd},
		{"exempt with queues", q(0, nil, n(1), nil, nil), crd},
		{"missing shares", q(6100, nil, n(64), n(6), n(50)), crd},
		{"missing queues", q(6100, n(10), nil, nil, n(50)), crd},
		{"missing queue limit", q(6100, n(10), n(1), nil, nil), crd},
		{"negative shares", q(6100, n(-1), n(1), nil, n(50)), crd},
		{"zero queues", q(6100, n(10), n(0), nil, n(50)), crd},
		{"too many queues", q(6100, n(10), n(4097), n(2), n(50)), crd},
		{"zero queue limit", q(6100, n(10), n(1), nil, n(0)), crd},
		{"hand missing", q(6100, n(10), n(64), nil, n(50)), crd},
		{"hand with one queue", q(6100, n(10), n(1), n(1), n(50)), crd},
		{"hand above queues", q(6100, n(10), n(8), n(9), n(50)), crd},
		{"zero hand", q(6100, n(10), n(8), n(0), n(50)), crd},
		{"hand above 64", q(6100, n(10), n(4096), n(65), n(50)), crd},
		{"hand over 2^60", q(6100, n(10), n(64), n(12), n(50)), webhookOnly},
		{"hand over 2^60 with many queues", q(6100, n(10), n(4096), n(6), n(50)), webhookOnly},
	}, bindingAgreementCases(q)...)
}

// bindingAgreementCases are the rules of nativeLevel (a bound level) and sharesFrom (a carved one).
func bindingAgreementCases(q func(level int32, shares, queues, hand, limit *int32) v1alpha1.RequestPrioritySpec) []rpCase {
	n := ptr.To[int32]
	with := func(s v1alpha1.RequestPrioritySpec, mutate func(*v1alpha1.RequestPrioritySpec)) v1alpha1.RequestPrioritySpec {
		mutate(&s)
		return s
	}
	bound := func(s *v1alpha1.RequestPrioritySpec) { s.NativeLevel = "workload-high" }
	carved := func(s *v1alpha1.RequestPrioritySpec) { s.SharesFrom = "workload-low" }
	pilot := func(s *v1alpha1.RequestPrioritySpec) {
		s.Autopilot = &v1alpha1.RequestPriorityAutopilot{MinShares: 5, MaxShares: 20}
	}
	return []rpCase{
		{"bound without queuing fields", with(q(6100, nil, nil, nil, nil), bound), accepted},
		{"bound with every field", with(q(6100, n(10), n(64), n(6), n(50)), bound), accepted},
		{"bound with queues and no hand", with(q(6100, nil, n(8), nil, nil), bound), crd},
		{"bound with a hand and no queues", with(q(6100, nil, nil, n(4), nil), bound), crd},
		{"bound at level 0", with(q(0, nil, nil, nil, nil), bound), crd},
		{"bound and carved", with(q(6100, n(10), nil, nil, nil), func(s *v1alpha1.RequestPrioritySpec) { bound(s); carved(s) }), crd},
		{"bound with autopilot", with(q(6100, n(10), nil, nil, nil), func(s *v1alpha1.RequestPrioritySpec) { bound(s); pilot(s) }), crd},
		{"bound to a bad name", with(q(6100, nil, nil, nil, nil), func(s *v1alpha1.RequestPrioritySpec) { s.NativeLevel = "Bad_Name" }), crd},
		{"carved", with(q(6100, n(10), n(64), n(6), n(50)), carved), accepted},
		{"carved with 0 shares", with(q(6100, n(0), n(1), nil, n(50)), carved), crd},
		{"carved with autopilot", with(q(6100, n(10), n(64), n(6), n(50)), func(s *v1alpha1.RequestPrioritySpec) { carved(s); pilot(s) }), crd},
		{"carved at level 0", with(q(0, nil, nil, nil, nil), carved), crd},
	}
}

type fsCase struct {
	name string
	spec v1alpha1.FlowSchemaSpec
	want rejectedBy
}

func flowSchemaAgreementCases() []fsCase {
	base := func(mutate func(*v1alpha1.FlowSchemaSpec)) v1alpha1.FlowSchemaSpec {
		s := flowSchema("", "it-agree-missing", &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceUser,
			Transformation: &v1alpha1.Transformation{Regex: "^(tenant-[a-z]+)-.*$"}}).Spec
		mutate(&s)
		return s
	}
	test := func(t v1alpha1.AtomicTest) func(*v1alpha1.FlowSchemaSpec) {
		return func(s *v1alpha1.FlowSchemaSpec) { s.Match = []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{t}}} }
	}
	regex := func(re string) func(*v1alpha1.FlowSchemaSpec) {
		return func(s *v1alpha1.FlowSchemaSpec) { s.FlowDistinguisher.Transformation.Regex = re }
	}
	value := func(f v1alpha1.RequestField, v string) *v1alpha1.ValueTest {
		return &v1alpha1.ValueTest{Field: f, Value: v}
	}
	set := func(f v1alpha1.RequestField, v ...string) *v1alpha1.SetTest {
		return &v1alpha1.SetTest{Field: f, Set: v}
	}
	return []fsCase{
		{"valid", base(func(*v1alpha1.FlowSchemaSpec) {}), accepted},
		{"valid match everything", base(func(s *v1alpha1.FlowSchemaSpec) { s.Match = []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{}}} }), accepted},
		{"valid namespace source", base(func(s *v1alpha1.FlowSchemaSpec) {
			s.FlowDistinguisher = &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceNamespace}
			s.Match[0].And = append(s.Match[0].And, v1alpha1.AtomicTest{InSet: set(v1alpha1.FieldResource, "pods")})
		}), accepted},
		{"valid empty value", base(test(v1alpha1.AtomicTest{Equals: value(v1alpha1.FieldSubresource, "")})), accepted},
		{"negative matching priority", base(func(s *v1alpha1.FlowSchemaSpec) { s.MatchingPriority = -1 }), crd},
		{"empty reference", base(func(s *v1alpha1.FlowSchemaSpec) { s.RequestPriority.Name = "" }), crd},
		{"unknown source", base(func(s *v1alpha1.FlowSchemaSpec) { s.FlowDistinguisher.Source = "group" }), crd},
		{"regex too long", base(regex("(" + strings.Repeat("a", 512) + ")")), crd},
		{"match absent", base(func(s *v1alpha1.FlowSchemaSpec) { s.Match = nil }), crd},
		{"and absent", base(func(s *v1alpha1.FlowSchemaSpec) { s.Match = []v1alpha1.Conjunction{{}} }), crd},
		{"too many conjunctions", base(func(s *v1alpha1.FlowSchemaSpec) {
			s.Match = make([]v1alpha1.Conjunction, 65)
			for i := range s.Match {
				s.Match[i].And = []v1alpha1.AtomicTest{}
			}
		}), crd},
		{"no operator", base(test(v1alpha1.AtomicTest{})), crd},
		{"two operators", base(test(v1alpha1.AtomicTest{Equals: value(v1alpha1.FieldVerb, "get"), NotEquals: value(v1alpha1.FieldVerb, "list")})), crd},
		{"unknown field", base(test(v1alpha1.AtomicTest{Equals: value("host", "x")})), crd},
		{"superSet on user", base(test(v1alpha1.AtomicTest{SuperSet: set(v1alpha1.FieldUser, "a")})), crd},
		{"equals on groups", base(test(v1alpha1.AtomicTest{Equals: value(v1alpha1.FieldGroups, "a")})), crd},
		{"notInSet on groups", base(test(v1alpha1.AtomicTest{NotInSet: set(v1alpha1.FieldGroups, "a")})), crd},
		{"empty set", base(test(v1alpha1.AtomicTest{InSet: set(v1alpha1.FieldVerb)})), crd},
		{"value too long", base(test(v1alpha1.AtomicTest{Equals: value(v1alpha1.FieldName, strings.Repeat("n", 1025))})), crd},
		{"empty pattern", base(test(v1alpha1.AtomicTest{PatternMatch: &v1alpha1.PatternTest{Field: v1alpha1.FieldUser}})), crd},
		{"reference not an object name", base(func(s *v1alpha1.FlowSchemaSpec) { s.RequestPriority.Name = "Bad_Name" }), webhookOnly},
		{"regex without capturing group", base(regex("tenant-.*")), webhookOnly},
		{"regex not RE2", base(regex("(a(?=b))")), webhookOnly},
		{"pattern not RE2", base(test(v1alpha1.AtomicTest{PatternMatch: &v1alpha1.PatternTest{Field: v1alpha1.FieldUser, Pattern: "a**"}})), webhookOnly},
		{"namespace source on non-resource requests", base(func(s *v1alpha1.FlowSchemaSpec) {
			s.FlowDistinguisher = &v1alpha1.FlowDistinguisher{Source: v1alpha1.SourceNamespace}
		}), webhookOnly},
	}
}
