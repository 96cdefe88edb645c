package native

import (
	"regexp"
	"regexp/syntax"

	"github.com/apf-operator/apf-operator/internal/validation"
)

// nodeBytes is what one node of a parse tree costs (a syntax.Regexp and its slices), to charge
// the analysis budget for trees before Simplify expands them.
const nodeBytes = 160

// pattern is what the analysis of one FlowSchema knows about one of its patterns, kept once per
// distinct pattern (64 conjunctions with the same pattern are analyzed once).
type pattern struct {
	tree *syntax.Regexp // parsed; nil when the pattern does not parse or the budget ran out
	// insts bounds the instructions of the compiled program (validation.ProgramSize).
	insts int
	lang  language
	ok    bool
	re    *regexp.Regexp      // compiled on first evaluation
	set   map[string]struct{} // the finite language, for lookups
}

// pattern returns the analysis of p, parsing and analyzing it within the budget the first time.
func (b *bounds) pattern(p string) *pattern {
	if info, ok := b.patterns[p]; ok {
		return info
	}
	info := &pattern{}
	if b.patterns == nil {
		b.patterns = map[string]*pattern{}
	}
	b.patterns[p] = info
	// The parse tree is charged before parsing by an upper bound from the text, then for what
	// it really holds beyond that; Simplify's expansion of repetitions before it happens.
	estimate := parseBytes(p)
	if !b.analysis(estimate) {
		info.lang = language{overBudget: true}
		return info
	}
	tree, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return info
	}
	info.insts = validation.ProgramSize(tree) + 2 // +2: the anchors evaluation adds
	if !b.analysis(max(0, treeBytes(tree)-estimate)) || !b.analysis(info.insts*nodeBytes) {
		info.lang = language{overBudget: true}
		return info
	}
	info.tree = tree
	a := &analyzer{bounds: b, memo: map[*syntax.Regexp]memoEntry{}}
	info.lang, info.ok = a.analyze(stripAnchors(stripCaptures(tree.Simplify())))
	if !info.ok {
		info.lang = language{tooLarge: a.tooLarge, overBudget: a.overBudget}
	}
	return info
}

// unicodeClassBytes bounds the parse tree of one Unicode class escape (\pL, \PL, \p{Greek}),
// case-folded: \pL under (?i) holds about 13 KiB of ranges.
const unicodeClassBytes = 32 << 10

// parseBytes bounds the memory of the parse tree of p from its text: a node per character and
// the ranges of each Unicode class escape.
func parseBytes(p string) int {
	n := len(p) * nodeBytes
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '\\' {
			if p[i+1] == 'p' || p[i+1] == 'P' {
				n += unicodeClassBytes
			}
			i++ // the escaped character
		}
	}
	return n
}

// treeBytes estimates the memory of a parse tree: its nodes and runes (Unicode classes hold
// thousands of ranges).
func treeBytes(re *syntax.Regexp) int {
	n := nodeBytes + 4*len(re.Rune)
	for _, s := range re.Sub {
		n += treeBytes(s)
	}
	return n
}

// matcher returns the compiled pattern, anchored at both ends, compiling it the first time
// (after the caller took the evaluation's cost from the budget).
func (p *pattern) matcher(expr string) *regexp.Regexp {
	if p.re == nil {
		re, err := regexp.Compile(`^(?:` + expr + `)$`)
		if err != nil {
			re = regexp.MustCompile(`[^\s\S]`) // matches nothing; validation rejects the pattern anyway
		}
		p.re = re
	}
	return p.re
}
