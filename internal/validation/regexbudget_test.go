package validation

import (
	"regexp/syntax"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// TestProgramSizeBoundsCompiledProgram checks that ProgramSize is within a factor of the
// instructions Go really compiles, so that the regex budget counts what compiling costs.
func TestProgramSizeBoundsCompiledProgram(t *testing.T) {
	for _, p := range []string{"x{1000}[a-p][a-p]", "pods", "kube-(system|public)", "[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?",
		`(?i)[\pL\pN\pS]{1,1000}`, "((a|b){8}){2}", "(a?){1000}", "/healthz(/.*)?", "(x*)*y", "a{2,5}", "(a|b|c|d|e)+"} {
		tree, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := syntax.Compile(tree.Simplify())
		if err != nil {
			t.Fatal(err)
		}
		got, real := ProgramSize(tree), len(prog.Inst)
		t.Logf("%-40q ProgramSize %5d, compiled %5d", p, got, real)
		if got < real/2 || got > 2*real+4 {
			t.Errorf("%q: ProgramSize %d, compiled program %d instructions; want within a factor of 2", p, got, real)
		}
	}
}

// TestRegexBudget checks the FlowSchema's regex budget: the error names the first pattern that
// goes over it, and every pattern after it stays unparsed (no error of its own).
func TestRegexBudget(t *testing.T) {
	conjunctions := func(n int, patterns ...string) []v1alpha1.Conjunction {
		out := make([]v1alpha1.Conjunction, n)
		for i := range out {
			for _, p := range patterns {
				out[i].And = append(out[i].And, v1alpha1.AtomicTest{
					PatternMatch: &v1alpha1.PatternTest{Field: v1alpha1.FieldResource, Pattern: p}})
			}
		}
		return out
	}
	long := "[" + strings.Repeat("a", 500) + "]" // 502 bytes, 1 instruction
	cases := []struct {
		name  string
		match []v1alpha1.Conjunction
		path  string // "" for no error
		msg   string
	}{
		{"realistic: 64 conjunctions of DNS-label patterns", conjunctions(64, "[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", "kube-.*"), "", ""},
		{"x{1000} 32 times fits", conjunctions(32, "x{1000}"), "", ""},
		{"x{1000} 33 times", conjunctions(33, "x{1000}"), "spec.match[32].and[0].patternMatch.pattern", "compile to more than 32768 instructions"},
		{"65 folded Unicode classes", conjunctions(13, `(?i)\pL\pN\pS\PL\p{Greek}`), "spec.match[12].and[0].patternMatch.pattern", "more than 64 Unicode class escapes"},
		{"escaped backslashes are no classes", conjunctions(64, `\\p\\P`), "", ""},
		{"66 KiB of pattern text", conjunctions(64, long, long), "spec.match[32].and[1].patternMatch.pattern", "more than 32768 bytes of text"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := &v1alpha1.FlowSchemaSpec{MatchingPriority: 10, RequestPriority: v1alpha1.RequestPriorityReference{Name: "x"},
				Match: c.match}
			errs, _ := FlowSchemaSpec(spec, field.NewPath("spec"))
			switch {
			case c.path == "" && len(errs) > 0:
				t.Fatalf("errors %v; want none", errs)
			case c.path == "":
			case len(errs) != 1 || errs[0].Field != c.path || !strings.Contains(errs[0].Detail, c.msg):
				t.Fatalf("errors %v; want one on %s containing %q", errs, c.path, c.msg)
			}
		})
	}
}
