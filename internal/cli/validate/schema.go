package validate

import (
	"cmp"
	"context"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/validation/crdschema"
)

// schemaErrors validates the object against its CRD's OpenAPI schema and CEL rules, as the
// API server does before the admission webhooks run, in a stable order (the schema validator
// walks maps in random order). A value the typed object could not hold that the schema does
// not report on its field (metadata.name is not in the CRDs' schemas) is reported from the
// decoding error, without Go's type names.
func schemaErrors(ctx context.Context, o manifest.Object) (field.ErrorList, error) {
	apiVersion, _ := o.Raw["apiVersion"].(string)
	kind, _ := o.Raw["kind"].(string)
	errs, _, err := crdschema.Validate(ctx, apiVersion, kind, o.Raw)
	if err != nil {
		return nil, err
	}
	errs = placeUnnamed(errs)
	slices.SortStableFunc(errs, func(a, b *field.Error) int {
		return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Error(), b.Error()))
	})
	if o.DecodeErr != nil {
		if e := manifest.DecodeError(o.DecodeErr); !slices.ContainsFunc(errs, func(s *field.Error) bool {
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
