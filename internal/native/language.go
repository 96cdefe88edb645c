package native

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

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
	// tooLarge (with no usable form) says why: the pattern's language, or a part of it, is
	// finite but larger than maxFiniteValues values or maxLanguageBytes bytes.
	tooLarge bool
	// overBudget (with no usable form) says the analysis budget of the FlowSchema ran out.
	overBudget bool
}

// analyzePattern returns the language of an RE2 pattern matched against the whole value, and
// false when it has none of the forms of language; the budgets are those of one FlowSchema.
func analyzePattern(pattern string) (language, bool) {
	p := newBounds().pattern(pattern)
	return p.lang, p.ok
}

// analyzer enumerates finite languages within the per-language limits and the analysis budget.
type analyzer struct {
	bounds *bounds
	// memo holds the language of each node: Simplify shares the node of a repeated expression
	// between its copies.
	memo map[*syntax.Regexp]memoEntry
	// tooLarge records that a finite language went over the per-language limits, overBudget
	// that the analysis budget ran out.
	tooLarge, overBudget bool
}

type memoEntry struct {
	values []string
	ok     bool
}

func (a *analyzer) analyze(re *syntax.Regexp) (language, bool) {
	if isAny(re) {
		return language{all: true}, true
	}
	if isAnyNonEmpty(re) {
		return language{all: true, nonEmpty: true}, true
	}
	if values, ok := a.finite(re); ok {
		return language{finite: true, values: values}, true
	}
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return language{}, false
	}
	head, last := re.Sub[:len(re.Sub)-1], stripCaptures(re.Sub[len(re.Sub)-1])
	base, ok := a.singleValue(head)
	if !ok {
		return language{}, false
	}
	if isAny(last) {
		return language{prefix: true, base: base}, true
	}
	if last.Op == syntax.OpQuest {
		if inner, ok := a.analyzeSub(stripCaptures(last.Sub[0])); ok && inner.prefix && inner.base == "/" {
			return language{subtree: true, base: base}, true
		}
	}
	return language{}, false
}

// analyzeSub recognises "<literal>.*" inside a larger pattern.
func (a *analyzer) analyzeSub(re *syntax.Regexp) (language, bool) {
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || !isAny(stripCaptures(re.Sub[len(re.Sub)-1])) {
		return language{}, false
	}
	base, ok := a.singleValue(re.Sub[:len(re.Sub)-1])
	return language{prefix: true, base: base}, ok
}

// singleValue returns the one string a sequence of sub-expressions accepts, if it is one.
func (a *analyzer) singleValue(parts []*syntax.Regexp) (string, bool) {
	values, ok := a.concat(parts)
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

// finite enumerates the language of re when it is finite and within the limits: at most
// maxFiniteValues values and maxLanguageBytes bytes, every intermediate set included, each
// checked before it is allocated.
func (a *analyzer) finite(re *syntax.Regexp) ([]string, bool) {
	if e, ok := a.memo[re]; ok {
		return e.values, e.ok
	}
	values, ok := a.finiteNode(re)
	a.memo[re] = memoEntry{values: values, ok: ok}
	return values, ok
}

func (a *analyzer) finiteNode(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return []string{""}, true
	case syntax.OpLiteral:
		return a.literal(re)
	case syntax.OpCharClass:
		return a.charClass(re)
	case syntax.OpCapture:
		return a.finite(re.Sub[0])
	case syntax.OpQuest:
		sub, ok := a.finite(re.Sub[0])
		if !ok {
			return nil, false
		}
		return a.union([]string{""}, sub)
	case syntax.OpAlternate:
		return a.alternate(re.Sub)
	case syntax.OpConcat:
		return a.concat(re.Sub)
	}
	return nil, false
}

// limit checks a language of n values and size bytes against the per-language limits and
// charges it to the analysis budget.
func (a *analyzer) limit(n, size int) bool {
	if n > maxFiniteValues || size > maxLanguageBytes {
		a.tooLarge = true
		return false
	}
	if !a.bounds.analysis(size + n*stringOverhead) {
		a.overBudget = true
		return false
	}
	return true
}

func (a *analyzer) literal(re *syntax.Regexp) ([]string, bool) {
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
	if !a.limit(1, len(re.Rune)*utf8.UTFMax) {
		return nil, false
	}
	return []string{string(re.Rune)}, true
}

// charClass lists a class's runes; its size is counted from its ranges before any is listed.
func (a *analyzer) charClass(re *syntax.Regexp) ([]string, bool) {
	n := 0
	for i := 0; i+1 < len(re.Rune); i += 2 {
		if n += int(re.Rune[i+1]-re.Rune[i]) + 1; n > maxFiniteValues {
			a.tooLarge = true
			return nil, false
		}
	}
	if !a.limit(n, n*utf8.UTFMax) {
		return nil, false
	}
	out := make([]string, 0, n)
	for i := 0; i+1 < len(re.Rune); i += 2 {
		for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
			if !exactRune(r) {
				return nil, false
			}
			out = append(out, string(r))
		}
	}
	return out, true
}

// exactRune reports whether a pattern's rune r matches exactly the string(r): not U+FFFD, which
// also matches a byte that is not UTF-8, nor a surrogate, which matches nothing.
func exactRune(r rune) bool { return r != utf8.RuneError && utf8.ValidRune(r) }

// concat joins the languages of parts. Runs of single-valued parts (the copies of x in x{1000})
// are joined into one literal before they meet a multi-valued part, so each product is built
// once; every multi-valued part at least doubles the count before duplicates go, so a concat
// builds at most log2(maxFiniteValues)+1 products.
func (a *analyzer) concat(parts []*syntax.Regexp) ([]string, bool) {
	out := []string{""}
	var pending strings.Builder
	for _, p := range parts {
		vals, ok := a.finite(p)
		switch {
		case !ok:
			return nil, false
		case len(vals) == 1:
			if pending.Len()+len(vals[0]) > maxLanguageBytes {
				a.tooLarge = true
				return nil, false
			}
			pending.WriteString(vals[0])
			continue
		}
		if out, ok = a.product(out, pending.String(), vals); !ok {
			return nil, false
		}
		pending.Reset()
	}
	return a.product(out, pending.String(), []string{""})
}

// product is every a+mid+b, duplicates removed; its size is checked before it is built.
func (a *analyzer) product(left []string, mid string, right []string) ([]string, bool) {
	if mid == "" && len(right) == 1 && right[0] == "" {
		return left, true
	}
	n := len(left) * len(right)
	if n > maxFiniteValues {
		a.tooLarge = true
		return nil, false
	}
	size := totalLen(left)*len(right) + len(mid)*n + totalLen(right)*len(left)
	if !a.limit(n, size) {
		return nil, false
	}
	out := make([]string, 0, n)
	for _, l := range left {
		for _, r := range right {
			out = append(out, l+mid+r)
		}
	}
	return dedupe(out), true
}

// alternate is the union of the languages of subs, built in one pass.
func (a *analyzer) alternate(subs []*syntax.Regexp) ([]string, bool) {
	var out []string
	seen, size := map[string]bool{}, 0
	for _, s := range subs {
		vals, ok := a.finite(s)
		if !ok {
			return nil, false
		}
		for _, v := range vals {
			if !seen[v] {
				seen[v], size = true, size+len(v)
				out = append(out, v)
			}
		}
		if len(out) > maxFiniteValues || size > maxLanguageBytes {
			a.tooLarge = true
			return nil, false
		}
	}
	return out, a.limit(len(out), size)
}

// union is a ∪ b; its size is checked after duplicates go (it holds at most the two inputs).
func (a *analyzer) union(x, y []string) ([]string, bool) {
	out := dedupe(append(append(make([]string, 0, len(x)+len(y)), x...), y...))
	if !a.limit(len(out), totalLen(out)) {
		return nil, false
	}
	return out, true
}

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
