package validation_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/validation"
)

func eq(f v1.RequestField, v string) v1.AtomicTest {
	return v1.AtomicTest{Equals: &v1.ValueTest{Field: f, Value: v}}
}

func in(f v1.RequestField, vs ...string) v1.AtomicTest {
	return v1.AtomicTest{InSet: &v1.SetTest{Field: f, Set: vs}}
}

func groups(vs ...string) v1.AtomicTest {
	return v1.AtomicTest{SuperSet: &v1.SetTest{Field: v1.FieldGroups, Set: vs}}
}

func notGroups(vs ...string) v1.AtomicTest {
	return v1.AtomicTest{NotSuperSet: &v1.SetTest{Field: v1.FieldGroups, Set: vs}}
}

func pattern(f v1.RequestField, p string) v1.AtomicTest {
	return v1.AtomicTest{PatternMatch: &v1.PatternTest{Field: f, Pattern: p}}
}

func notPattern(f v1.RequestField, p string) v1.AtomicTest {
	return v1.AtomicTest{NotPatternMatch: &v1.PatternTest{Field: f, Pattern: p}}
}

func schemaAt(name string, priority int32, conjunctions ...[]v1.AtomicTest) *v1.FlowSchema {
	fs := &v1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.FlowSchemaSpec{
		MatchingPriority: priority, RequestPriority: v1.RequestPriorityReference{Name: "level"}}}
	for _, c := range conjunctions {
		fs.Spec.Match = append(fs.Spec.Match, v1.Conjunction{And: c})
	}
	return fs
}

const argocd = "system:serviceaccount:argocd:argocd-application-controller"

func TestOverlaps(t *testing.T) {
	for _, tc := range []struct {
		name    string
		a, b    *v1.FlowSchema
		overlap bool
	}{
		{"same user", schemaAt("b", 10, []v1.AtomicTest{eq(v1.FieldUser, argocd)}),
			schemaAt("a", 10, []v1.AtomicTest{in(v1.FieldUser, "x", argocd)}), true},
		{"same user, other matchingPriority", schemaAt("a", 10, []v1.AtomicTest{eq(v1.FieldUser, argocd)}),
			schemaAt("b", 11, []v1.AtomicTest{eq(v1.FieldUser, argocd)}), false},
		{"different users", schemaAt("a", 10, []v1.AtomicTest{eq(v1.FieldUser, argocd)}),
			schemaAt("b", 10, []v1.AtomicTest{eq(v1.FieldUser, "alice")}), false},
		{"user and a group are independent", schemaAt("a", 10, []v1.AtomicTest{eq(v1.FieldUser, argocd)}),
			schemaAt("b", 10, []v1.AtomicTest{groups("system:serviceaccounts")}), true},
		{"a group and its negation", schemaAt("a", 10, []v1.AtomicTest{groups("g1", "g2")}),
			schemaAt("b", 10, []v1.AtomicTest{notGroups("g1")}), false},
		{"a group and another's negation", schemaAt("a", 10, []v1.AtomicTest{groups("g1")}),
			schemaAt("b", 10, []v1.AtomicTest{notGroups("g1", "g2")}), true},
		{"disjoint resources", schemaAt("a", 10, []v1.AtomicTest{eq(v1.FieldUser, argocd), eq(v1.FieldResource, "pods")}),
			schemaAt("b", 10, []v1.AtomicTest{eq(v1.FieldResource, "nodes")}), false},
		{"disjoint verbs", schemaAt("a", 10, []v1.AtomicTest{eq(v1.FieldVerb, "create")}),
			schemaAt("b", 10, []v1.AtomicTest{in(v1.FieldVerb, "get", "list")}), false},
		{"a path and a resource", schemaAt("a", 10, []v1.AtomicTest{pattern(v1.FieldPath, "/healthz(/.*)?")}),
			schemaAt("b", 10, []v1.AtomicTest{pattern(v1.FieldResource, ".*")}), false},
		{"second conjunction overlaps", schemaAt("a", 10, []v1.AtomicTest{eq(v1.FieldUser, "alice")},
			[]v1.AtomicTest{eq(v1.FieldNamespace, "kube-system")}),
			schemaAt("b", 10, []v1.AtomicTest{eq(v1.FieldUser, "bob"), pattern(v1.FieldResource, ".*")}), true},
		{"everything", schemaAt("a", 10, []v1.AtomicTest{}), schemaAt("b", 10, []v1.AtomicTest{}), true},
		{"a name and everything", schemaAt("a", 10, []v1.AtomicTest{eq(v1.FieldName, "x")}),
			schemaAt("b", 10, []v1.AtomicTest{}), true},
		{"two names", schemaAt("a", 10, []v1.AtomicTest{eq(v1.FieldName, "x")}),
			schemaAt("b", 10, []v1.AtomicTest{eq(v1.FieldName, "y")}), false},
		{"a name and a path (names are absent from non-resource requests)",
			schemaAt("a", 10, []v1.AtomicTest{eq(v1.FieldName, "x")}),
			schemaAt("b", 10, []v1.AtomicTest{pattern(v1.FieldPath, "/healthz(/.*)?")}), false},
		{"a negated user and a listed one", schemaAt("a", 10, []v1.AtomicTest{notPattern(v1.FieldUser, "system:serviceaccount:.*")}),
			schemaAt("b", 10, []v1.AtomicTest{eq(v1.FieldUser, argocd)}), false},
		{"undecided (two unbounded user patterns) is not reported",
			schemaAt("a", 10, []v1.AtomicTest{pattern(v1.FieldUser, "system:controller:.*")}),
			schemaAt("b", 10, []v1.AtomicTest{pattern(v1.FieldUser, "system:.*")}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := validation.Overlaps([]*v1.FlowSchema{tc.a, tc.b}, native.Intersect)
			var want []validation.Overlap
			if tc.overlap {
				first, second := tc.a.Name, tc.b.Name
				if second < first {
					first, second = second, first
				}
				want = []validation.Overlap{{First: first, Second: second, MatchingPriority: tc.a.Spec.MatchingPriority}}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Overlaps = %v; want %v", got, want)
			}
		})
	}
}

// TestOverlapsDefaults: three of the proposal's defaults put at one matchingPriority overlap
// pairwise, as their matches do: system-top (system:masters, any request), workload-high (users
// that are not service accounts, resource requests) and workload-low (every resource request).
// The user negation of workload-high is decided with a witness user.
func TestOverlapsDefaults(t *testing.T) {
	fss := defaults.Proposal().FlowSchemas()
	byName := map[string]*v1.FlowSchema{}
	for i := range fss {
		fss[i].Spec.MatchingPriority = 1
		byName[fss[i].Name] = &fss[i]
	}
	got := validation.Overlaps([]*v1.FlowSchema{byName["workload-high"], byName["workload-low"], byName["system-top"]}, native.Intersect)
	want := []validation.Overlap{
		{First: "system-top", Second: "workload-high", MatchingPriority: 1},
		{First: "system-top", Second: "workload-low", MatchingPriority: 1},
		{First: "workload-high", Second: "workload-low", MatchingPriority: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Overlaps = %v; want %v", got, want)
	}
}

func TestOverlapWarnings(t *testing.T) {
	a := schemaAt("preset-argocd", 5010, []v1.AtomicTest{eq(v1.FieldUser, argocd)})
	mine := schemaAt("argocd", 5010, []v1.AtomicTest{groups("system:serviceaccounts:argocd"), pattern(v1.FieldResource, ".*")})
	other := schemaAt("other", 5010, []v1.AtomicTest{eq(v1.FieldUser, "alice"), pattern(v1.FieldPath, "/healthz(/.*)?")})
	set := validation.NewSet(nil, []*v1.FlowSchema{a, other})
	got, err := validation.OverlapWarnings(context.Background(), mine, set, native.Intersect)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.Contains(got[0], `"argocd" and "preset-argocd"`) ||
		!strings.Contains(got[0], "different matchingPriority") {
		t.Errorf("OverlapWarnings = %q; want one naming argocd and preset-argocd and the fix", got)
	}
	// The stored version of the object under validation is not compared with itself.
	if got, _ := validation.OverlapWarnings(context.Background(), a, set, native.Intersect); len(got) != 0 {
		t.Errorf("OverlapWarnings of a stored object against itself = %q; want none", got)
	}
}

// TestOverlapWarningsWithinBudget: past the admission's budget of conjunction pairs the peers
// are not compared (the intersector is not called for them) and one warning counts them.
func TestOverlapWarningsWithinBudget(t *testing.T) {
	mine := schemaAt("mine", 7000, []v1.AtomicTest{eq(v1.FieldUser, "alice")})
	var stored []*v1.FlowSchema
	for i := range 5 {
		stored = append(stored, schemaAt(fmt.Sprintf("peer-%d", i), 7000, []v1.AtomicTest{eq(v1.FieldUser, "alice")}))
	}
	set := validation.NewSet(nil, stored)
	calls := 0
	always := func(_, _ *v1.FlowSchemaSpec) bool { calls++; return true }
	got, err := validation.OverlapWarningsWithin(context.Background(), mine, set, always, 3)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 3 || len(got) != 4 || !strings.Contains(got[3], "2 other FlowSchema(s) at spec.matchingPriority 7000 were not checked") {
		t.Errorf("within 3 pairs: %d comparisons, warnings %q; want 3 comparisons, 3 overlaps and one naming the 2 unchecked", calls, got)
	}
	calls = 0
	if got, _ := validation.OverlapWarnings(context.Background(), mine, set, always); calls != 5 || len(got) != 5 {
		t.Errorf("without a budget: %d comparisons, %d warnings; want 5 and 5", calls, len(got))
	}
}
