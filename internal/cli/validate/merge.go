package validate

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/internal/manifest"
)

// merge joins the schema's errors and the webhook rules' errors about one object. Where both
// report one field, the rules' error is kept (it names the fix; the CRDs' CEL rules repeat the
// webhook's rules on the same paths), except for a value of the wrong type: the schema says
// so, and the rules, which saw the field unset, are dropped for that field, the fields under
// it and the errors that name it.
func merge(schemaErrs, ruleErrs field.ErrorList) field.ErrorList {
	ruleFields := map[string]bool{}
	for _, e := range ruleErrs {
		ruleFields[e.Field] = true
	}
	var out field.ErrorList
	var typeFields []string
	for _, e := range schemaErrs {
		if isTypeError(e) {
			typeFields = append(typeFields, e.Field)
		}
		if isTypeError(e) || !ruleFields[e.Field] {
			out = append(out, e)
		}
	}
	for _, e := range ruleErrs {
		if !slices.ContainsFunc(typeFields, func(f string) bool { return concerns(e, f) }) {
			out = append(out, e)
		}
	}
	return out
}

// concerns reports whether e is about the field at path, a field under it, or names it in its
// message (a rule that read the field unset).
func concerns(e *field.Error, path string) bool {
	if e.Field == path || strings.HasPrefix(e.Field, path+".") || strings.HasPrefix(e.Field, path+"[") {
		return true
	}
	steps := manifest.PathSteps(path)
	return len(steps) > 0 && strings.Contains(e.Detail, steps[len(steps)-1])
}
