package validation

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// FlowSchemaSpec checks a FlowSchema spec on its own: matchingPriority, the reference's name,
// the flow distinguisher (source, transformation regex, and `source: namespace` only when every
// conjunction is ResourceOnly) and every atomic test of match. An empty match (`match: []`,
// which matches nothing) is a warning. fldPath is the path of the spec.
func FlowSchemaSpec(spec *v1alpha1.FlowSchemaSpec, fldPath *field.Path) (errs field.ErrorList, warnings []string) {
	if spec == nil {
		return field.ErrorList{field.Required(fldPath, "spec is required: set matchingPriority, requestPriority and match")}, nil
	}
	if spec.MatchingPriority < 0 || spec.MatchingPriority > MaxMatchingPriority {
		errs = append(errs, field.Invalid(fldPath.Child("matchingPriority"), spec.MatchingPriority,
			fmt.Sprintf("must be between 0 and %d (numerically lower wins)", MaxMatchingPriority)))
	}
	errs = append(errs, referenceName(spec.RequestPriority.Name, fldPath.Child("requestPriority", "name"))...)
	budget := newRegexBudget()
	errs = append(errs, distinguisher(spec, fldPath.Child("flowDistinguisher"), budget)...)
	matchErrs, matchWarnings := match(spec.Match, fldPath.Child("match"), budget)
	return append(errs, matchErrs...), matchWarnings
}

// referenceName checks that name could name a RequestPriority object.
func referenceName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "name the RequestPriority the matched requests go to")}
	}
	if msgs := apimachineryvalidation.NameIsDNSSubdomain(name, false); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, name, "not a valid object name: "+strings.Join(msgs, "; "))}
	}
	return nil
}

// distinguisher checks spec.flowDistinguisher.
func distinguisher(spec *v1alpha1.FlowSchemaSpec, p *field.Path, budget *regexBudget) field.ErrorList {
	d := spec.FlowDistinguisher
	if d == nil {
		return nil
	}
	var errs field.ErrorList
	switch d.Source {
	case v1alpha1.SourceUser:
	case v1alpha1.SourceNamespace:
		errs = append(errs, namespaceSource(spec.Match, p.Child("source"))...)
	case "":
		errs = append(errs, field.Required(p.Child("source"), `set "user" or "namespace"`))
	default:
		errs = append(errs, field.NotSupported(p.Child("source"), d.Source,
			[]v1alpha1.DistinguisherSource{v1alpha1.SourceUser, v1alpha1.SourceNamespace}))
	}
	if d.Transformation != nil {
		errs = append(errs, transformationRegex(d.Transformation.Regex, p.Child("transformation", "regex"), budget)...)
	}
	return errs
}

// namespaceSource allows `source: namespace` only when every conjunction accepts resource
// requests only (a non-resource request has no namespace).
func namespaceSource(conjunctions []v1alpha1.Conjunction, p *field.Path) field.ErrorList {
	var open []string
	for i, c := range conjunctions {
		if !ResourceOnly(c) {
			open = append(open, fmt.Sprintf("match[%d]", i))
		}
	}
	if len(open) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(p, v1alpha1.SourceNamespace, fmt.Sprintf(
		"source namespace needs every conjunction to accept only resource requests, but %s may accept "+
			"non-resource requests (which have no namespace): add a positive test on apiGroup, resource, "+
			"subresource, namespace or name to each (for example patternMatch {field: resource, pattern: \".*\"}), "+
			"or use source user", strings.Join(open, ", ")))}
}

// transformationRegex checks the regex of a transformation: RE2, bounded length, and at least
// one capturing group (the transformation yields submatch 1).
func transformationRegex(re string, p *field.Path, budget *regexBudget) field.ErrorList {
	if errs := regexSyntax(re, p, budget); len(errs) > 0 {
		return errs
	}
	if capturingGroups(re) < 1 {
		return field.ErrorList{field.Invalid(p, re,
			"has no capturing group, and the transformation yields submatch 1: put parentheses around "+
				"the part to keep, for example ^(tenant-[a-z]+)-.*$")}
	}
	return nil
}

// regexSyntax checks that re is present, not too long, within what is left of the FlowSchema's
// regex budget, and compiles as RE2.
func regexSyntax(re string, p *field.Path, budget *regexBudget) field.ErrorList {
	switch {
	case re == "":
		return field.ErrorList{field.Required(p, "set an RE2 regular expression")}
	case utf8.RuneCountInString(re) > MaxRegexLength:
		return field.ErrorList{field.TooLongCharacters(p, re, MaxRegexLength)}
	}
	if skip, err := budget.text(re, p); err != nil {
		return field.ErrorList{err}
	} else if skip {
		return nil // the budget error is already reported
	}
	tree, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return field.ErrorList{field.Invalid(p, re, "not an RE2 regular expression: "+err.Error())}
	}
	if err := budget.program(re, ProgramSize(tree), p); err != nil {
		return field.ErrorList{err}
	}
	if _, err := compileFull(re); err != nil {
		return field.ErrorList{field.Invalid(p, re, "not an RE2 regular expression: "+err.Error())}
	}
	return nil
}
