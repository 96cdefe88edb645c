package native

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxFiniteValues bounds the values a pattern's finite language may enumerate into; a larger
// language is treated as unbounded.
const maxFiniteValues = 256

// language describes the set of values a pattern accepts, in the forms the native API can use.
type language struct {
	// all: every value; with nonEmpty, every value but "".
	all      bool
	nonEmpty bool
	// finite: exactly values (when all, prefix and subtree are unset).
	finite bool
	values []string
	// prefix: every value that starts with base.
	prefix bool
	// subtree: base itself and every value that starts with base + "/".
	subtree bool
	base    string
}

// analyzePattern returns the language of an RE2 pattern matched against the whole value, and
// false when it has none of the forms of language.
func analyzePattern(pattern string) (language, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return language{}, false
	}
	re = stripAnchors(stripCaptures(re.Simplify()))
	if isAny(re) {
		return language{all: true}, true
	}
	if isAnyNonEmpty(re) {
		return language{all: true, nonEmpty: true}, true
	}
	if values, ok := finiteLanguage(re); ok {
		return language{finite: true, values: values}, true
	}
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return language{}, false
	}
	head, last := re.Sub[:len(re.Sub)-1], stripCaptures(re.Sub[len(re.Sub)-1])
	base, ok := singleValue(head)
	if !ok {
		return language{}, false
	}
	if isAny(last) {
		return language{prefix: true, base: base}, true
	}
	if last.Op == syntax.OpQuest {
		if inner, ok := analyzeSub(stripCaptures(last.Sub[0])); ok && inner.prefix && inner.base == "/" {
			return language{subtree: true, base: base}, true
		}
	}
	return language{}, false
}

// analyzeSub recognises "<literal>.*" inside a larger pattern.
func analyzeSub(re *syntax.Regexp) (language, bool) {
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || !isAny(stripCaptures(re.Sub[len(re.Sub)-1])) {
		return language{}, false
	}
	base, ok := singleValue(re.Sub[:len(re.Sub)-1])
	return language{prefix: true, base: base}, ok
}

// singleValue returns the one string a sequence of sub-expressions accepts, if it is one.
func singleValue(parts []*syntax.Regexp) (string, bool) {
	values, ok := finiteLanguage(&syntax.Regexp{Op: syntax.OpConcat, Sub: parts})
	if !ok || len(values) != 1 {
		return "", false
	}
	return values[0], true
}

// stripAnchors drops a leading ^ and a trailing $ of the whole pattern: it is matched against
// the whole value anyway, so "^pods$" means "pods".
func stripAnchors(re *syntax.Regexp) *syntax.Regexp {
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return re
	}
	sub := re.Sub
	if sub[0].Op == syntax.OpBeginText {
		sub = sub[1:]
	}
	if len(sub) > 0 && sub[len(sub)-1].Op == syntax.OpEndText {
		sub = sub[:len(sub)-1]
	}
	switch len(sub) {
	case len(re.Sub):
		return re
	case 0:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	case 1:
		return stripCaptures(sub[0])
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Sub: sub, Flags: re.Flags}
}

func stripCaptures(re *syntax.Regexp) *syntax.Regexp {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	return re
}

// isAny reports whether re is ".*" (with or without the s flag).
func isAny(re *syntax.Regexp) bool {
	re = stripCaptures(re)
	if re.Op != syntax.OpStar {
		return false
	}
	sub := stripCaptures(re.Sub[0])
	return sub.Op == syntax.OpAnyChar || sub.Op == syntax.OpAnyCharNotNL
}

// isAnyNonEmpty reports whether re is ".+" (with or without the s flag).
func isAnyNonEmpty(re *syntax.Regexp) bool {
	if re.Op != syntax.OpPlus {
		return false
	}
	sub := stripCaptures(re.Sub[0])
	return sub.Op == syntax.OpAnyChar || sub.Op == syntax.OpAnyCharNotNL
}

// finiteLanguage enumerates the language of re when it is finite and small.
func finiteLanguage(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return []string{""}, true
	case syntax.OpLiteral:
		return literal(re)
	case syntax.OpCharClass:
		return charClass(re)
	case syntax.OpCapture:
		return finiteLanguage(re.Sub[0])
	case syntax.OpQuest:
		sub, ok := finiteLanguage(re.Sub[0])
		return union([]string{""}, sub), ok
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			vals, ok := finiteLanguage(s)
			if !ok {
				return nil, false
			}
			if out = union(out, vals); len(out) > maxFiniteValues {
				return nil, false
			}
		}
		return out, true
	case syntax.OpConcat:
		return concatLanguage(re.Sub)
	}
	return nil, false
}

func literal(re *syntax.Regexp) ([]string, bool) {
	for _, r := range re.Rune {
		if !exactRune(r) {
			return nil, false
		}
	}
	if re.Flags&syntax.FoldCase != 0 {
		for _, r := range re.Rune {
			if unicode.SimpleFold(r) != r {
				return nil, false // case-insensitive letters: several spellings
			}
		}
	}
	return []string{string(re.Rune)}, true
}

func charClass(re *syntax.Regexp) ([]string, bool) {
	var out []string
	for i := 0; i+1 < len(re.Rune); i += 2 {
		for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
			if !exactRune(r) {
				return nil, false
			}
			if out = append(out, string(r)); len(out) > maxFiniteValues {
				return nil, false
			}
		}
	}
	return out, true
}

// exactRune reports whether a pattern's rune r matches exactly the string(r): not U+FFFD, which
// also matches a byte that is not UTF-8, nor a surrogate, which matches nothing.
func exactRune(r rune) bool { return r != utf8.RuneError && utf8.ValidRune(r) }

func concatLanguage(parts []*syntax.Regexp) ([]string, bool) {
	out := []string{""}
	for _, p := range parts {
		vals, ok := finiteLanguage(p)
		if !ok || len(out)*len(vals) > maxFiniteValues {
			return nil, false
		}
		next := make([]string, 0, len(out)*len(vals))
		for _, a := range out {
			for _, b := range vals {
				next = append(next, a+b)
			}
		}
		out = dedupe(next)
	}
	return out, true
}

func union(a, b []string) []string { return dedupe(append(append([]string{}, a...), b...)) }

func dedupe(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := in[:0]
	for _, v := range in {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// accepts reports whether the language holds v.
func (l language) accepts(v string) bool {
	switch {
	case l.all:
		return !l.nonEmpty || v != ""
	case l.finite:
		return slices.Contains(l.values, v)
	case l.prefix:
		return strings.HasPrefix(v, l.base)
	case l.subtree:
		return v == l.base || strings.HasPrefix(v, l.base+"/")
	}
	return false
}
