// Package worstcase builds adversarial FlowSchemas for the tests and benchmarks that bound the
// work of admitting and projecting any object the CRD's schema admits: pattern languages that
// are finite but huge (x{1000}[a-p][a-p]), resource × subresource cross products, nested
// repetitions, Unicode classes, long alternations, long literals and the largest sets. Every
// object fits the CRD's bounds (64 conjunctions, 32 tests, 256 values of 1,024 characters,
// patterns of 512 characters) and kube-apiserver's request size: its JSON is under 3 MiB, and
// under etcd's 1.5 MiB for all but worst-set-filters (which only the webhook sees). The webhook
// refuses the four over 1 MiB unread (webhooks.MaxFlowSchemaBytes).
package worstcase

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// Case is one adversarial FlowSchema and what it is built to stress.
type Case struct {
	// Name is the FlowSchema's name (and the benchmark's).
	Name string
	// Stress says what the case is built to cost.
	Stress string
	// Spec is the FlowSchema's spec, referring to the RequestPriority given to FlowSchemas.
	Spec flowv1.FlowSchemaSpec
	// Expressible is true for the one realistic large case, which must still be projected.
	Expressible bool
}

// FlowSchema returns the case as an object.
func (c Case) FlowSchema() *flowv1.FlowSchema {
	return &flowv1.FlowSchema{
		TypeMeta:   metav1.TypeMeta{APIVersion: flowv1.GroupVersion.String(), Kind: "FlowSchema"},
		ObjectMeta: metav1.ObjectMeta{Name: c.Name}, Spec: *c.Spec.DeepCopy(),
	}
}

// FlowSchemas returns every case; their FlowSchemas refer to the RequestPriority rp.
func FlowSchemas(rp string) []Case {
	return []Case{
		{Name: "worst-pattern-pair", Stress: "resource and subresource x{1000}[a-p][a-p]: 256 × 256 pairs of 2 KiB (128 MiB)",
			Spec: spec(rp, repeat(1, conj(pattern(flowv1.FieldResource, "x{1000}[a-p][a-p]"),
				pattern(flowv1.FieldSubresource, "x{1000}[a-p][a-p]"))))},
		{Name: "worst-pattern-pair-64", Stress: "the pattern pair in 64 conjunctions (8 GiB)",
			Spec: spec(rp, repeat(64, conj(pattern(flowv1.FieldResource, "x{1000}[a-p][a-p]"),
				pattern(flowv1.FieldSubresource, "x{1000}[a-p][a-p]"))))},
		{Name: "worst-cross-product-64", Stress: "x{1000}[a-p] × x{1000}[a-p]: 256 pairs of 2 KiB per conjunction, 64 conjunctions",
			Spec: spec(rp, repeat(64, conj(pattern(flowv1.FieldResource, "x{1000}[a-p]"),
				pattern(flowv1.FieldSubresource, "x{1000}[a-p]"))))},
		{Name: "worst-nested-groups", Stress: "nested repetitions ((a|b){8}){2}, ((a|b|c|d){4}){1,2} and (a?){1000} on every field",
			Spec: spec(rp, repeat(64, conj(nested()...)))},
		{Name: "worst-unicode-classes", Stress: "[\\x00-\\x{10FFFF}]{1000}, (?i)[\\pL\\pN\\pS]{1,1000} and \\pL runs in 32 tests × 64 conjunctions",
			Spec: spec(rp, repeat(64, conj(classes()...)))},
		{Name: "worst-distinct-classes", Stress: "2,048 distinct 511-character patterns of folded \\pL classes (2 MiB parse trees each)",
			Spec: spec(rp, distinctClasses())},
		{Name: "worst-evaluation", Stress: "31 costly negated patterns evaluated on the 16 values of 1 KiB of x{1000}[a-p], 64 conjunctions",
			Spec: spec(rp, repeat(64, conj(evaluation()...)))},
		{Name: "worst-alternations", Stress: "512-character patterns of 100 alternatives, two concatenated groups (10,000 values)",
			Spec: spec(rp, repeat(64, conj(alternations()...)))},
		{Name: "worst-long-literals", Stress: "inSet of 256 distinct 1,024-character resources × 256 subresources (128 MiB), 2 conjunctions",
			Spec: spec(rp, repeat(2, conj(set(flowv1.FieldResource, 256, 1024, "r"), set(flowv1.FieldSubresource, 256, 1024, "s"))))},
		{Name: "worst-inset-4096", Expressible: true, Stress: "16 inSets of 256 namespaces (4,096 entries) and 16 of 256 users per conjunction, 4 conjunctions",
			Spec: spec(rp, repeat(4, conj(append(repeatTest(16, set(flowv1.FieldNamespace, 256, 12, "n")),
				repeatTest(16, set(flowv1.FieldUser, 256, 12, "u"))...)...)))},
		{Name: "worst-set-filters", Stress: "an inSet of 256 values filtered by 31 notInSets of 256 values, 48 conjunctions (1,536 sets, 2.9 MiB)",
			Spec: spec(rp, repeat(48, conj(append([]flowv1.AtomicTest{set(flowv1.FieldNamespace, 256, 2, "")},
				repeatTest(31, notSet(flowv1.FieldNamespace, 256, 2, "z"))...)...)))},
		{Name: "worst-users-64", Stress: "256 users of 60 characters in each of 64 conjunctions: 16,384 subjects",
			Spec: spec(rp, usersPerConjunction(64, 256, 60))},
		{Name: "large-realistic", Expressible: true, Stress: "64 conjunctions of 32 users, 16 namespaces, 4 verbs, 8 resources: 3,840 listed values",
			Spec: spec(rp, realistic())},
	}
}

func spec(rp string, match []flowv1.Conjunction) flowv1.FlowSchemaSpec {
	return flowv1.FlowSchemaSpec{MatchingPriority: 5000, RequestPriority: flowv1.RequestPriorityReference{Name: rp}, Match: match}
}

func conj(tests ...flowv1.AtomicTest) flowv1.Conjunction { return flowv1.Conjunction{And: tests} }

func repeat(n int, c flowv1.Conjunction) []flowv1.Conjunction {
	out := make([]flowv1.Conjunction, n)
	for i := range out {
		out[i] = *c.DeepCopy()
	}
	return out
}

func repeatTest(n int, t flowv1.AtomicTest) []flowv1.AtomicTest {
	out := make([]flowv1.AtomicTest, n)
	for i := range out {
		out[i] = *t.DeepCopy()
	}
	return out
}

func pattern(f flowv1.RequestField, p string) flowv1.AtomicTest {
	return flowv1.AtomicTest{PatternMatch: &flowv1.PatternTest{Field: f, Pattern: p}}
}

func notPattern(f flowv1.RequestField, p string) flowv1.AtomicTest {
	return flowv1.AtomicTest{NotPatternMatch: &flowv1.PatternTest{Field: f, Pattern: p}}
}

// set is an inSet of n distinct values of length size, starting with prefix.
func set(f flowv1.RequestField, n, size int, prefix string) flowv1.AtomicTest {
	values := make([]string, n)
	for i := range values {
		v := fmt.Sprintf("%s%d-", prefix, i)
		values[i] = v + strings.Repeat("x", max(0, size-len(v)))
	}
	return flowv1.AtomicTest{InSet: &flowv1.SetTest{Field: f, Set: values}}
}

// notSet is a notInSet of n distinct values of length size, starting with prefix.
func notSet(f flowv1.RequestField, n, size int, prefix string) flowv1.AtomicTest {
	in := set(f, n, size, prefix)
	return flowv1.AtomicTest{NotInSet: in.InSet}
}

func nested() []flowv1.AtomicTest {
	out := []flowv1.AtomicTest{
		pattern(flowv1.FieldResource, "((a|b){8}){2}"), pattern(flowv1.FieldSubresource, "((a|b|c|d){4}){1,2}"),
		pattern(flowv1.FieldUser, "(a?){1000}"), pattern(flowv1.FieldNamespace, "((a|b){8}){2}"),
	}
	for len(out) < 32 {
		out = append(out, notPattern(flowv1.FieldVerb, "((x|y){10}){100}"))
	}
	return out
}

func classes() []flowv1.AtomicTest {
	runs := "(?i)" + strings.Repeat(`\pL`, 169) // 511 characters of folded Unicode classes
	out := []flowv1.AtomicTest{
		pattern(flowv1.FieldUser, `[\x00-\x{10FFFF}]{1000}`), pattern(flowv1.FieldResource, `(?i)[\pL\pN\pS]{1,1000}`),
		pattern(flowv1.FieldSubresource, `[^a]{1000}`),
	}
	for len(out) < 32 {
		out = append(out, notPattern(flowv1.FieldNamespace, runs))
	}
	return out
}

func distinctClasses() []flowv1.Conjunction {
	out := make([]flowv1.Conjunction, 64)
	for i := range out {
		for j := range 32 {
			runs := fmt.Sprintf("(?i)%d-%d", i, j) + strings.Repeat(`\pL`, 165)
			out[i].And = append(out[i].And, notPattern(flowv1.FieldNamespace, runs))
		}
		out[i].And[0] = pattern(flowv1.FieldNamespace, "x{1000}[a-p]")
	}
	return out
}

func evaluation() []flowv1.AtomicTest {
	out := []flowv1.AtomicTest{pattern(flowv1.FieldResource, "x{1000}[a-p]")}
	for len(out) < 32 {
		out = append(out, notPattern(flowv1.FieldResource, fmt.Sprintf(`(?i)[\pL\pN\pS]{1,1000}%d`, len(out))))
	}
	return out
}

func alternations() []flowv1.AtomicTest {
	alt := func(prefix string, n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		return "(" + strings.Join(parts, "|") + ")"
	}
	two := alt("a", 60) + alt("b", 60) // 3,600 values
	many := alt("", 100)               // 100 values
	out := []flowv1.AtomicTest{pattern(flowv1.FieldResource, two), pattern(flowv1.FieldSubresource, many)}
	for len(out) < 32 {
		out = append(out, notPattern(flowv1.FieldResource, many))
	}
	return out
}

func usersPerConjunction(conjunctions, users, size int) []flowv1.Conjunction {
	out := make([]flowv1.Conjunction, conjunctions)
	for i := range out {
		out[i] = conj(set(flowv1.FieldUser, users, size, fmt.Sprintf("c%d-u", i)))
	}
	return out
}

func realistic() []flowv1.Conjunction {
	out := make([]flowv1.Conjunction, 64)
	for i := range out {
		out[i] = conj(set(flowv1.FieldUser, 32, 40, fmt.Sprintf("system:serviceaccount:team-%d:sa-", i)),
			set(flowv1.FieldNamespace, 16, 20, fmt.Sprintf("team-%d-ns-", i)),
			flowv1.AtomicTest{InSet: &flowv1.SetTest{Field: flowv1.FieldVerb, Set: []string{"get", "list", "watch", "create"}}},
			flowv1.AtomicTest{InSet: &flowv1.SetTest{Field: flowv1.FieldAPIGroup, Set: []string{"", "apps"}}},
			flowv1.AtomicTest{InSet: &flowv1.SetTest{Field: flowv1.FieldResource, Set: []string{"pods", "services",
				"configmaps", "secrets", "deployments", "replicasets", "statefulsets", "events"}}},
			flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: flowv1.FieldSubresource, Value: ""}})
	}
	return out
}
