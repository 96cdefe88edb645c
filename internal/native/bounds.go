package native

import (
	"fmt"
	"slices"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// Budgets of the analysis of one FlowSchema (the package doc gives the arithmetic behind them).
const (
	// maxFiniteValues and maxLanguageBytes bound the finite language of one pattern: a larger
	// one is not listed (the pattern is NotExpressible, as an unbounded one is).
	maxFiniteValues  = 256
	maxLanguageBytes = 64 << 10
	// maxListedValues and maxListedBytes bound the values one native FlowSchema lists (subjects,
	// verbs, API groups, resources, namespaces, paths), over all its rules.
	maxListedValues = 8192
	maxListedBytes  = 256 << 10
	// maxAnalysisBytes bounds the bytes the analysis of one FlowSchema materializes while it
	// enumerates pattern languages (values not listed in the end included).
	maxAnalysisBytes = 16 << 20
	// maxEvalWork bounds the evaluation of patterns on the finite values of a field, in
	// instruction-bytes: (program instructions + 8) × (value length + 1) per evaluation, an upper
	// bound on the steps of Go's regexp engines.
	maxEvalWork = 8 << 20
	// stringOverhead is what one materialized string costs beside its bytes (its header and its
	// entry in the set that removes duplicates).
	stringOverhead = 64
)

// bounds is what is left of the budgets of one FlowSchema's analysis.
type bounds struct {
	listedValues, listedBytes int
	analysisBytes             int
	evalWork                  int
	// patterns keeps the analysis of each distinct pattern of the FlowSchema.
	patterns map[string]*pattern
	// overList records that a rule did not fit the listed-values budget.
	overList bool
}

// spent reports whether a budget of the FlowSchema ran out: its analysis stops there.
func (b *bounds) spent() bool { return b.overList || b.analysisBytes < 0 || b.evalWork < 0 }

// newBounds returns the budgets of one FlowSchema.
func newBounds() *bounds {
	return &bounds{listedValues: maxListedValues, listedBytes: maxListedBytes, analysisBytes: maxAnalysisBytes,
		evalWork: maxEvalWork}
}

// analysis takes n bytes of materialized strings from the analysis budget; false (taking
// nothing) when they do not fit.
func (b *bounds) analysis(n int) bool {
	if b == nil {
		return true
	}
	if n > b.analysisBytes {
		b.analysisBytes = -1 // exhausted: later analyses fail too
		return false
	}
	b.analysisBytes -= n
	return true
}

// eval takes the work of evaluating a program of insts instructions on values; false when it
// does not fit.
func (b *bounds) eval(insts int, values []string) bool {
	if b == nil {
		return true
	}
	work := 0
	for _, v := range values {
		if work += (insts + 8) * (len(v) + 1); work > b.evalWork {
			b.evalWork = -1 // exhausted: the analysis stops
			return false
		}
	}
	b.evalWork -= work
	return true
}

// fits reports whether a rule listing values values of bytes bytes fits what is left.
func (b *bounds) fits(values, bytes int) bool {
	return b == nil || (values <= b.listedValues && bytes <= b.listedBytes)
}

// list takes a rule's listed values from the budget; false when they do not fit.
func (b *bounds) list(values, bytes int) bool {
	if !b.fits(values, bytes) {
		return false
	}
	if b != nil {
		b.listedValues -= values
		b.listedBytes -= bytes
	}
	return true
}

// totalLen is the number of bytes of values.
func totalLen(values []string) int {
	n := 0
	for _, v := range values {
		n += len(v)
	}
	return n
}

// sizeText formats a byte count for messages ("64 KiB", "128 MiB").
func sizeText(n int) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 10<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// countText formats a count with thousands separators ("65,536").
func countText(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// productFits checks, before the list is built, that the resource/subresource pairs of a
// conjunction fit what is left of the listed-values budget.
func (c *conjunction) productFits(res, sub []string) *field.Error {
	n := len(res) * len(sub)
	size := totalLen(res)*len(sub) + (totalLen(sub)+1)*len(res)
	if c.bounds.fits(n, size) {
		return nil
	}
	c.bounds.overList = true
	return field.Invalid(c.path.Child("and"), string(flowv1.FieldResource), fmt.Sprintf(
		"not expressible natively: the native rule would list %s resource/subresource pairs (%s): %s resources × %s "+
			"subresources; native rules list values, so keep the languages of resource and subresource small: a "+
			"native FlowSchema lists at most %s values and %s, and %s values and %s are left for this conjunction",
		countText(n), sizeText(size), countText(len(res)), countText(len(sub)), countText(maxListedValues),
		sizeText(maxListedBytes), countText(c.bounds.listedValues), sizeText(c.bounds.listedBytes)))
}

// charge takes the values a conjunction's native rule lists from the FlowSchema's budget.
func (c *conjunction) charge(r *flowcontrolv1.PolicyRulesWithSubjects) *field.Error {
	n, size := listedSize(r)
	if c.bounds.list(n, size) {
		return nil
	}
	c.bounds.overList = true
	return field.Invalid(c.path, fmt.Sprintf("%s values (%s)", countText(n), sizeText(size)), fmt.Sprintf(
		"not expressible natively: with this conjunction the native FlowSchema would list more than %s values or "+
			"%s (%s values and %s are left for it); native rules list values, so list fewer users, namespaces, "+
			"resources or paths, or split the match into several FlowSchemas",
		countText(maxListedValues), sizeText(maxListedBytes), countText(c.bounds.listedValues), sizeText(c.bounds.listedBytes)))
}

// listedSize counts the values a native rule lists and their bytes.
func listedSize(r *flowcontrolv1.PolicyRulesWithSubjects) (n, size int) {
	add := func(values ...string) {
		n += len(values)
		size += totalLen(values)
	}
	for _, s := range r.Subjects {
		switch {
		case s.User != nil:
			add(s.User.Name)
		case s.Group != nil:
			add(s.Group.Name)
		case s.ServiceAccount != nil:
			add(s.ServiceAccount.Namespace, s.ServiceAccount.Name)
		}
	}
	for _, rr := range r.ResourceRules {
		add(rr.Verbs...)
		add(rr.APIGroups...)
		add(rr.Resources...)
		add(rr.Namespaces...)
	}
	for _, nr := range r.NonResourceRules {
		add(nr.Verbs...)
		add(nr.NonResourceURLs...)
	}
	return n, size
}

// languageOverBudget explains a pattern whose language was not enumerated because of a limit,
// or nil.
func languageOverBudget(t *test) *field.Error {
	lang, _ := t.language()
	switch {
	case lang.overBudget:
		return analysisOverBudget(t)
	case lang.tooLarge:
		return field.Invalid(t.path, t.operand(), fmt.Sprintf("not expressible natively: on field %s, pattern %q "+
			"accepts more than %d values or %s, which native rules would have to list one by one; keep the pattern's "+
			"language small (at most %d values and %s), or bound the field with equals or inSet",
			t.field, t.pattern, maxFiniteValues, sizeText(maxLanguageBytes), maxFiniteValues, sizeText(maxLanguageBytes)))
	}
	return nil
}

// analysisOverBudget explains a pattern left unanalyzed or unevaluated because the analysis
// budget ran out.
func analysisOverBudget(t *test) *field.Error {
	return field.Invalid(t.path, t.operand(), fmt.Sprintf("not expressible natively: parsing, enumerating and "+
		"compiling the patterns of this FlowSchema takes more than the analysis budget of %s; native rules list "+
		"values, so keep the patterns small and their languages small (at most %d values and %s each), or split "+
		"the FlowSchema", sizeText(maxAnalysisBytes), maxFiniteValues, sizeText(maxLanguageBytes)))
}

// evalOverBudget explains a pattern too costly to evaluate on the finite values of its field.
func evalOverBudget(t *test, values []string) *field.Error {
	if t.bounds.analysisBytes < 0 { // compiling the pattern did not fit the analysis budget
		return analysisOverBudget(t)
	}
	return field.Invalid(t.path, t.operand(), fmt.Sprintf("not expressible natively: evaluating pattern %q on the %s "+
		"values (%s) the other tests leave for field %s takes more than the evaluation budget of %s "+
		"instruction-bytes per FlowSchema; bound the field with fewer or shorter values, or use a simpler pattern",
		t.pattern, countText(len(values)), sizeText(totalLen(values)), t.field, countText(maxEvalWork)))
}

// members tracks which values of a conjunction's finite set for one field survive its set
// tests, with one map for all of them: a test's survivors carry the current generation.
// set.values stays the truth; the map may hold values it no longer has.
type members struct {
	gen int
	of  map[string]int
}

// track starts tracking values, once.
func (m *members) track(values []string) {
	if m.of == nil {
		m.of = make(map[string]int, len(values))
		for _, v := range values {
			m.of[v] = m.gen
		}
	}
}

// intersect is s ∩ values.
func (m *members) intersect(s valueSet, values []string) valueSet {
	if s.all {
		return valueSet{values: dedupe(slices.Clone(values))}
	}
	m.track(s.values)
	m.gen++
	for _, v := range values {
		if g, ok := m.of[v]; ok && g == m.gen-1 {
			m.of[v] = m.gen
		}
	}
	return valueSet{values: m.survivors(s.values)}
}

// drop removes operand from values.
func (m *members) drop(values, operand []string) []string {
	m.track(values)
	m.gen++
	for _, v := range values {
		m.of[v] = m.gen
	}
	for _, v := range operand {
		if _, ok := m.of[v]; ok {
			m.of[v] = -1
		}
	}
	return m.survivors(values)
}

func (m *members) survivors(values []string) []string {
	return slices.DeleteFunc(values, func(v string) bool { return m.of[v] != m.gen })
}
