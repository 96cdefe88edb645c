package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The regex budget of one FlowSchema (its patterns and its transformation regex together). The
// CRD admits 2,048 patterns of 512 characters per FlowSchema, whose parsing and compiling would
// take seconds and GiBs; these bounds keep validating any FlowSchema (in the webhook, in
// `apf-operator validate` and in every reconcile) under a few milliseconds, and its compiled
// patterns smaller than the largest object kube-apiserver stores. They are checked in order,
// each before the step it bounds: the text before parsing, the program before compiling.
const (
	// MaxRegexBytesPerFlowSchema bounds the bytes of pattern text: parsing costs about 50 ns a
	// byte.
	MaxRegexBytesPerFlowSchema = 32 << 10
	// MaxUnicodeClassesPerFlowSchema bounds the Unicode class escapes (\pL, \PN, \p{Greek}):
	// each parses into up to 13 KiB of ranges (case-folded \pL) in about 30 µs.
	MaxUnicodeClassesPerFlowSchema = 64
	// MaxRegexProgramPerFlowSchema bounds the instructions of the compiled programs
	// (ProgramSize: x{1000} counts 1,000): each costs about 40 bytes and 0.5 µs to compile.
	MaxRegexProgramPerFlowSchema = 32_768
)

// regexBudget is what is left of one FlowSchema's regex budget. Once it is exceeded (one
// error, on the pattern that exceeds it), the later patterns are no longer parsed.
type regexBudget struct {
	bytes, classes, insts int
	exceeded              bool
}

func newRegexBudget() *regexBudget {
	return &regexBudget{bytes: MaxRegexBytesPerFlowSchema, classes: MaxUnicodeClassesPerFlowSchema,
		insts: MaxRegexProgramPerFlowSchema}
}

// budgetFix is the advice every budget error ends with.
const budgetFix = "; simplify the patterns (fewer or smaller repetitions, no Unicode classes where ASCII ones do) " +
	"or split the match into several FlowSchemas"

// text takes re's bytes and Unicode class escapes from the budget, before re is parsed; skip
// is true once the budget is exceeded.
func (b *regexBudget) text(re string, p *field.Path) (skip bool, err *field.Error) {
	if b.exceeded {
		return true, nil
	}
	err = b.takeText(re, p)
	b.exceeded = err != nil
	return b.exceeded, err
}

func (b *regexBudget) takeText(re string, p *field.Path) *field.Error {
	classes := unicodeClasses(re)
	b.bytes -= len(re)
	b.classes -= classes
	switch {
	case b.bytes < 0:
		return field.Invalid(p, re, fmt.Sprintf("over the FlowSchema's regex budget: its patterns hold more than %d "+
			"bytes of text together%s", MaxRegexBytesPerFlowSchema, budgetFix))
	case b.classes < 0:
		return field.Invalid(p, re, fmt.Sprintf("over the FlowSchema's regex budget: its patterns hold more than %d "+
			"Unicode class escapes (\\p, \\P) together, and this one has %d%s", MaxUnicodeClassesPerFlowSchema,
			classes, budgetFix))
	}
	return nil
}

// program takes the instructions of re's program from the budget, before re is compiled.
func (b *regexBudget) program(re string, size int, p *field.Path) *field.Error {
	if b.insts -= size; b.insts >= 0 {
		return nil
	}
	b.exceeded = true
	return field.Invalid(p, re, fmt.Sprintf("over the FlowSchema's regex budget: its patterns compile to more than "+
		"%d instructions together (a repetition x{n} counts n times), and this one to about %d%s",
		MaxRegexProgramPerFlowSchema, size, budgetFix))
}

// unicodeClasses counts the Unicode class escapes of re (\p and \P, not an escaped backslash
// followed by p).
func unicodeClasses(re string) int {
	n := 0
	for i := 0; i+1 < len(re); i++ {
		if re[i] == '\\' {
			if re[i+1] == 'p' || re[i+1] == 'P' {
				n++
			}
			i++
		}
	}
	return n
}
