package validation

import (
	"regexp"
	"regexp/syntax"
)

// compileFull compiles re as RE2 anchored at both ends, the way patterns and transformations
// are matched against a whole attribute value. The caller parses re itself first, so that a
// syntax error quotes what the user wrote.
func compileFull(re string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + re + `)$`)
}

// capturingGroups returns the number of capturing groups of a valid regex.
func capturingGroups(re string) int {
	r, err := regexp.Compile(re)
	if err != nil {
		return 0
	}
	return r.NumSubexp()
}

// ProgramSize is about the number of instructions of the program Go's regexp compiles for the
// parsed re, computed from the parse tree with repetitions counted, not expanded (as Go's own
// parser sizes a pattern), so that it costs next to nothing: x{1000} counts 1,000, x{2,5}
// counts 5 + 3. The regex budget of a FlowSchema and the native analysis's evaluation budget
// are counted in it.
func ProgramSize(re *syntax.Regexp) int {
	sub := 0
	for _, s := range re.Sub {
		sub += ProgramSize(s)
	}
	switch re.Op {
	case syntax.OpLiteral:
		return max(1, len(re.Rune))
	case syntax.OpCapture:
		return 2 + sub
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return 1 + sub
	case syntax.OpAlternate:
		return sub + len(re.Sub) - 1
	case syntax.OpRepeat:
		if re.Max < 0 {
			return re.Min*sub + 1
		}
		return re.Max*sub + re.Max - re.Min
	case syntax.OpConcat:
		return max(1, sub)
	}
	return 1 + sub
}
