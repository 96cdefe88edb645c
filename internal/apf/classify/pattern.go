package classify

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// pattern matches a whole attribute value against a compiled RE2 pattern. The forms most
// FlowSchemas use (".*", "literal", "prefix.*", ".*suffix") are matched with string functions,
// which give the same answer as the regular expression at a fraction of its cost; anything
// else runs the regular expression.
type pattern struct {
	kind    patternKind
	literal string         // the literal, prefix or suffix
	re      *regexp.Regexp // anchored at both ends
}

type patternKind uint8

const (
	patternRegexp  patternKind = iota
	patternAny                 // .*
	patternLiteral             // literal
	patternPrefix              // literal.*
	patternSuffix              // .*literal
)

// match reports whether the whole of v matches. "." does not match a newline, so the fast
// forms check that the part matched by ".*" has none.
func (p *pattern) match(v string) bool {
	switch p.kind {
	case patternAny:
		return noNewline(v)
	case patternLiteral:
		return v == p.literal
	case patternPrefix:
		return strings.HasPrefix(v, p.literal) && noNewline(v[len(p.literal):])
	case patternSuffix:
		return strings.HasSuffix(v, p.literal) && noNewline(v[:len(v)-len(p.literal)])
	}
	return p.re.MatchString(v)
}

// noNewline reports whether v has no newline (strings.IndexByte skips the substring search
// that strings.Contains would set up).
func noNewline(v string) bool { return strings.IndexByte(v, '\n') < 0 }

// specialize recognises the fast forms of a pattern (already known to compile).
func specialize(expr string, re *regexp.Regexp) *pattern {
	p := &pattern{re: re}
	t, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return p
	}
	t = t.Simplify()
	switch {
	case isAnyString(t):
		p.kind = patternAny
	case isLiteral(t):
		p.kind, p.literal = patternLiteral, string(t.Rune)
	case t.Op == syntax.OpConcat && len(t.Sub) == 2 && isLiteral(t.Sub[0]) && isAnyString(t.Sub[1]):
		p.kind, p.literal = patternPrefix, string(t.Sub[0].Rune)
	case t.Op == syntax.OpConcat && len(t.Sub) == 2 && isAnyString(t.Sub[0]) && isLiteral(t.Sub[1]):
		p.kind, p.literal = patternSuffix, string(t.Sub[1].Rune)
	}
	return p
}

// isAnyString reports whether t is ".*" (any string without a newline).
func isAnyString(t *syntax.Regexp) bool {
	return t.Op == syntax.OpStar && t.Sub[0].Op == syntax.OpAnyCharNotNL
}

// isLiteral reports whether t is a case-sensitive literal without U+FFFD (which the regular
// expression would also match against an invalid byte).
func isLiteral(t *syntax.Regexp) bool {
	return t.Op == syntax.OpLiteral && t.Flags&syntax.FoldCase == 0 && !slices.Contains(t.Rune, utf8.RuneError)
}
