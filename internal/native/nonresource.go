package native

import (
	"fmt"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// nonResourceRule compiles the conjunction's non-resource part; none is true when it accepts
// no non-resource request.
func (c *conjunction) nonResourceRule() (*flowcontrolv1.NonResourcePolicyRule, bool, *field.Error) {
	if c.hasPositive(resourceOnly...) {
		return nil, true, nil
	}
	verbs, verbErr := constrain(c.byField[flowv1.FieldVerb], nil)
	if verbErr == nil && verbs.empty() {
		return nil, true, nil
	}
	urls, none, pathErr := c.paths()
	switch {
	case none:
		return nil, true, nil
	case verbErr != nil:
		return nil, false, verbErr
	case pathErr != nil:
		return nil, false, pathErr
	}
	verbList, err := c.nonResourceVerbs(verbs)
	if err != nil || len(verbList) == 0 {
		return nil, err == nil, err
	}
	return &flowcontrolv1.NonResourcePolicyRule{Verbs: verbList, NonResourceURLs: urls}, false, nil
}

// nonResourceVerbs lists the allowed HTTP methods as native verbs. A non-resource request's
// verb is its lower-case HTTP method, any token (custom methods included, never ""): a native
// verb matches the method of the same name (get, patch, delete, and custom ones such as LIST).
func (c *conjunction) nonResourceVerbs(s valueSet) ([]string, *field.Error) {
	if s.all {
		return []string{flowcontrolv1.VerbAll}, nil
	}
	var out []string
	for _, v := range s.values {
		switch {
		case v != strings.ToLower(v) || v == "":
			continue // no request has this verb: methods are lower-cased
		case v == "*":
			return nil, wildcardLiteral(c, flowv1.FieldVerb)
		case !slices.Contains(nativeVerbs, v):
			return nil, field.Invalid(c.path.Child("and"), v, fmt.Sprintf("not expressible natively: non-resource "+
				"requests with method %q can be matched natively only by every verb (\"*\"); native verbs are %s",
				strings.ToUpper(v), strings.Join(nativeVerbs, ", ")))
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return out, nil
}

// paths compiles the path tests into native non-resource URLs: "*", "/prefix/*" for a pattern
// "/prefix/.*", and "/base" for a pattern "/base(/.*)?" (a native path also accepts
// everything below it).
func (c *conjunction) paths() ([]string, bool, *field.Error) {
	tests := c.byField[flowv1.FieldPath]
	var finite []*test
	for _, t := range tests {
		if lang, ok := t.language(); ok && lang.finite && !t.negate {
			finite = append(finite, t)
		}
	}
	if len(finite) > 0 {
		set, _ := constrain(tests, nil) // bounded by a finite positive: never unbounded
		if set.empty() {
			return nil, true, nil
		}
		return nil, false, field.Invalid(finite[0].path, finite[0].operand(), "not expressible natively: a native "+
			"path also accepts every path below it; write patternMatch {field: path, pattern: \"/healthz(/.*)?\"} "+
			"to mean a path and everything below it")
	}
	return c.pathLanguage(tests)
}

func (c *conjunction) pathLanguage(tests []*test) ([]string, bool, *field.Error) {
	urls, constrained := []string{flowcontrolv1.NonResourceAll}, false
	for _, t := range tests {
		lang, known := t.language()
		switch {
		case known && lang.all && !t.negate:
			continue
		case known && lang.all:
			return nil, true, nil
		case t.negate || !known:
			return nil, false, unbounded(t)
		case constrained:
			return nil, false, field.Invalid(t.path, t.operand(), "not expressible natively: a native rule takes "+
				"one kind of path, and this conjunction has two path patterns; keep one")
		}
		url, ok := nativePath(lang)
		if !ok {
			return nil, false, field.Invalid(t.path, t.operand(), "not expressible natively: native paths are "+
				"\"*\", an exact path with everything below it (pattern \"/base(/.*)?\") or a prefix ending in a slash "+
				"(pattern \"/prefix/.*\"), without spaces, \"//\" or \"*\"")
		}
		urls, constrained = []string{url}, url != flowcontrolv1.NonResourceAll
	}
	return urls, false, nil
}

// nativePath is the native URL for a prefix or subtree language.
func nativePath(lang language) (string, bool) {
	b := lang.base
	switch {
	case lang.prefix && b == "":
		return flowcontrolv1.NonResourceAll, true
	case !strings.HasPrefix(b, "/") || strings.ContainsAny(b, " \t\n*") || strings.Contains(b, "//"):
		return "", false
	case lang.prefix && strings.HasSuffix(b, "/"):
		return b + "*", true
	case lang.subtree && !strings.HasSuffix(b, "/"):
		return b, true
	}
	return "", false
}
