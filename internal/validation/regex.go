package validation

import (
	"regexp"
	"regexp/syntax"
)

// compileFull compiles re as RE2 anchored at both ends, the way patterns and transformations
// are matched against a whole attribute value. The syntax is checked on re itself first so that
// the error message quotes what the user wrote.
func compileFull(re string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(re); err != nil {
		return nil, err
	}
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

// ProgramSize is an upper bound of the instructions of the program Go's regexp compiles for
// the parsed re, computed from the parse tree with repetitions counted, not expanded, so that
// it costs next to nothing. The regex budget of a FlowSchema and the native analysis's
// evaluation budget are counted in it.
func ProgramSize(re *syntax.Regexp) int {
	n := 1
	for _, s := range re.Sub {
		n += ProgramSize(s)
	}
	switch re.Op {
	case syntax.OpLiteral:
		n += len(re.Rune)
	case syntax.OpCapture:
		n++
	case syntax.OpRepeat:
		copies := max(re.Min, re.Max)
		if re.Max < 0 {
			copies = re.Min + 1
		}
		n = 1 + copies*(n+1)
	}
	return n
}
