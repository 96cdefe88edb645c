package validate

import (
	"cmp"
	"context"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/internal/validation/crdschema"
)

// schemaErrors validates the object against its CRD's OpenAPI schema and CEL rules, as the
// API server does before the admission webhooks run, in a stable order (the schema validator
// walks maps in random order). A value the typed object could not hold that the schema does
// not report on its field (metadata.name is not in the CRDs' schemas) is reported from the
// decoding error, without Go's type names.
func schemaErrors(ctx context.Context, o object) (field.ErrorList, error) {
	apiVersion, _ := o.raw["apiVersion"].(string)
	kind, _ := o.raw["kind"].(string)
	errs, _, err := crdschema.Validate(ctx, apiVersion, kind, o.raw)
	if err != nil {
		return nil, err
	}
	errs = placeUnnamed(errs)
	slices.SortStableFunc(errs, func(a, b *field.Error) int {
		return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Error(), b.Error()))
	})
	if o.decodeErr != nil {
		if e := decodeError(o.decodeErr); !slices.ContainsFunc(errs, func(s *field.Error) bool {
			return s.Field == e.Field || e.Field == "<nil>" && isTypeError(s)
		}) {
			errs = append(errs, e)
		}
	}
	return errs, nil
}

// unnamedPath finds the field a schema error without a path names in its message, as
// kube-openapi's format check words it ("... must be of type integer with format int32 in
// spec.matchingPriority").
var unnamedPath = regexp.MustCompile(` in ([A-Za-z0-9_.\[\]-]+)$`)

// placeUnnamed gives the schema errors that lack a field path (reported as "<nil>") the path
// their message names, and drops them when another error already reports that field.
func placeUnnamed(errs field.ErrorList) field.ErrorList {
	named := map[string]bool{}
	for _, e := range errs {
		named[e.Field] = true
	}
	var out field.ErrorList
	for _, e := range errs {
		if e.Field == "<nil>" || e.Field == "" {
			m := unnamedPath.FindStringSubmatch(e.Detail)
			if m != nil && named[m[1]] {
				continue
			}
			if m != nil {
				e.Field = m[1]
			}
		}
		out = append(out, e)
	}
	return out
}

// isTypeError reports whether e is about a value of the wrong type.
func isTypeError(e *field.Error) bool { return e.Type == field.ErrorTypeTypeInvalid }

// goTypeError matches encoding/json's type error, to say it without Go's struct names.
var goTypeError = regexp.MustCompile(`cannot unmarshal (.+) into Go struct field [^.\s]+\.(\S+) of type (\S+)`)

// decodeError turns a decoding error into a field error.
func decodeError(err error) *field.Error {
	m := goTypeError.FindStringSubmatch(err.Error())
	if m == nil {
		return field.Invalid(nil, nil, "cannot decode: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	return &field.Error{Type: field.ErrorTypeTypeInvalid, Field: m[2], BadValue: field.OmitValueType{},
		Detail: "a " + m[1] + " cannot be decoded as " + m[3]}
}

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
	steps := pathSteps(path)
	return len(steps) > 0 && strings.Contains(e.Detail, steps[len(steps)-1])
}
