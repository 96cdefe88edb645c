package native_test

import (
	"fmt"
	"math/rand"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/classify"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/native"
)

// The vocabulary of TestIntersectAgreesWithClassifier: tests draw values from these, and the
// sample requests take each listed value plus one that no test names, so a conjunction that
// accepts some request accepts a sample.
var (
	vocabUsers      = []string{"u1", "u2"}
	vocabGroups     = []string{"g1", "g2"}
	vocabVerbs      = []string{"get", "create"}
	vocabResources  = []string{"pods", "nodes"}
	vocabSubs       = []string{"", "status"}
	vocabNamespaces = []string{"", "ns1"}
	vocabNames      = []string{"n1"}
	vocabPaths      = []string{"/healthz", "/x"}
)

// samples are every request over the vocabulary (with an unnamed user, verb, resource,
// namespace and name), resource and non-resource.
func samples() []request.Attributes {
	users := append(vocabUsers, "zz-other")
	groupSets := [][]string{nil, {"g1"}, {"g2"}, {"g1", "g2"}}
	var out []request.Attributes
	for _, u := range users {
		for _, g := range groupSets {
			for _, v := range append(vocabVerbs, "delete") { // a verb no test names
				for _, p := range vocabPaths {
					out = append(out, request.Attributes{User: u, Groups: g, Verb: v, Path: p})
				}
				for _, r := range append(vocabResources, "zz-other") {
					for _, s := range vocabSubs {
						for _, ns := range append(vocabNamespaces, "zz-other") {
							for _, n := range append(vocabNames, "") {
								out = append(out, request.Attributes{User: u, Groups: g, Verb: v, Resource: r,
									Subresource: s, Namespace: ns, Name: n, ResourceRequest: true})
							}
						}
					}
				}
			}
		}
	}
	return out
}

// overlapTest draws one test that the analysis decides: any operator on user and name, superSet
// and notSuperSet on groups, positive tests on the other fields and notEquals on verb.
func overlapTest(r *rand.Rand) flowv1.AtomicTest {
	pick := func(vs []string) string { return vs[r.Intn(len(vs))] }
	some := func(vs []string) []string {
		out := []string{pick(vs)}
		if r.Intn(2) == 0 {
			out = append(out, pick(vs))
		}
		return out
	}
	switch r.Intn(12) {
	case 0:
		return flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: flowv1.FieldUser, Value: pick(vocabUsers)}}
	case 1:
		return flowv1.AtomicTest{NotInSet: &flowv1.SetTest{Field: flowv1.FieldUser, Set: some(vocabUsers)}}
	case 2:
		return flowv1.AtomicTest{SuperSet: &flowv1.SetTest{Field: flowv1.FieldGroups, Set: some(vocabGroups)}}
	case 3:
		return flowv1.AtomicTest{NotSuperSet: &flowv1.SetTest{Field: flowv1.FieldGroups, Set: some(vocabGroups)}}
	case 4:
		return flowv1.AtomicTest{InSet: &flowv1.SetTest{Field: flowv1.FieldVerb, Set: some(vocabVerbs)}}
	case 5:
		return flowv1.AtomicTest{NotEquals: &flowv1.ValueTest{Field: flowv1.FieldVerb, Value: pick(vocabVerbs)}}
	case 6:
		return flowv1.AtomicTest{InSet: &flowv1.SetTest{Field: flowv1.FieldResource, Set: some(vocabResources)}}
	case 7:
		return flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: flowv1.FieldSubresource, Value: pick(vocabSubs)}}
	case 8:
		return flowv1.AtomicTest{InSet: &flowv1.SetTest{Field: flowv1.FieldNamespace, Set: some(vocabNamespaces)}}
	case 9:
		return flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: flowv1.FieldName, Value: pick(vocabNames)}}
	case 10:
		return flowv1.AtomicTest{NotEquals: &flowv1.ValueTest{Field: flowv1.FieldName, Value: pick(vocabNames)}}
	}
	return flowv1.AtomicTest{PatternMatch: &flowv1.PatternTest{Field: flowv1.FieldPath, Pattern: pick(vocabPaths) + "(/.*)?"}}
}

func overlapSpec(r *rand.Rand) flowv1.FlowSchemaSpec {
	spec := flowv1.FlowSchemaSpec{MatchingPriority: 10, RequestPriority: flowv1.RequestPriorityReference{Name: "level"}}
	for range 1 + r.Intn(2) {
		c := flowv1.Conjunction{And: []flowv1.AtomicTest{}} // `and: []`, not null
		for range r.Intn(4) {
			c.And = append(c.And, overlapTest(r))
		}
		spec.Match = append(spec.Match, c)
	}
	return spec
}

// matcher classifies with the in-process filter's classifier, the reference for what a
// FlowSchema matches.
func matcher(t *testing.T, spec flowv1.FlowSchemaSpec) func(*request.Attributes) bool {
	t.Helper()
	rp := flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "level"}, Spec: flowv1.RequestPrioritySpec{
		PriorityLevel: 10, AssuredConcurrencyShares: ptr.To[int32](1), QueuesPerWidth: ptr.To[int32](1),
		QueueLengthLimit: ptr.To[int32](1)}}
	fs := flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "fs"}, Spec: spec}
	cfg := effective.Compute([]flowv1.RequestPriority{rp}, []flowv1.FlowSchema{fs})
	if st := cfg.FlowSchemaStatus["fs"]; !st.InEffect {
		t.Fatalf("FlowSchema %s not in effect: %s", showSpec(spec), st.Message)
	}
	c := classify.Compile(cfg)
	return func(a *request.Attributes) bool {
		var out classify.Result
		c.Classify(a, &out)
		return out.Schema.Name == "fs"
	}
}

// TestIntersectAgreesWithClassifier: over random pairs of FlowSchemas whose tests the analysis
// decides, Intersect is true exactly when some request matches both, by the classifier.
func TestIntersectAgreesWithClassifier(t *testing.T) {
	r := rand.New(rand.NewSource(27))
	reqs := samples()
	overlaps := 0
	for i := range 400 {
		a, b := overlapSpec(r), overlapSpec(r)
		ma, mb := matcher(t, a), matcher(t, b)
		var witness *request.Attributes
		for j := range reqs {
			if ma(&reqs[j]) && mb(&reqs[j]) {
				witness = &reqs[j]
				break
			}
		}
		if got := native.Intersect(&a, &b); got != (witness != nil) {
			t.Fatalf("pair %d: Intersect = %v, want %v (witness %+v)\na: %s\nb: %s", i, got, witness != nil, witness,
				showSpec(a), showSpec(b))
		}
		if witness != nil {
			overlaps++
		}
	}
	if overlaps < 40 || overlaps > 360 {
		t.Errorf("%d of 400 pairs overlap: the draw should hold both kinds", overlaps)
	}
}

func showSpec(s flowv1.FlowSchemaSpec) string {
	out := ""
	for _, c := range s.Match {
		out += "["
		for _, t := range c.And {
			switch {
			case t.Equals != nil:
				out += fmt.Sprintf(" %s==%q", t.Equals.Field, t.Equals.Value)
			case t.NotEquals != nil:
				out += fmt.Sprintf(" %s!=%q", t.NotEquals.Field, t.NotEquals.Value)
			case t.InSet != nil:
				out += fmt.Sprintf(" %s in %q", t.InSet.Field, t.InSet.Set)
			case t.NotInSet != nil:
				out += fmt.Sprintf(" %s notin %q", t.NotInSet.Field, t.NotInSet.Set)
			case t.SuperSet != nil:
				out += fmt.Sprintf(" groups>=%q", t.SuperSet.Set)
			case t.NotSuperSet != nil:
				out += fmt.Sprintf(" !groups>=%q", t.NotSuperSet.Set)
			case t.PatternMatch != nil:
				out += fmt.Sprintf(" %s~%q", t.PatternMatch.Field, t.PatternMatch.Pattern)
			}
		}
		out += " ]"
	}
	return out
}
