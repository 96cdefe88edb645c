package classify

import (
	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/request"
)

// field is a request attribute, numbered for arrays.
type field uint8

const (
	fieldUser field = iota
	fieldGroups
	fieldVerb
	fieldAPIGroup
	fieldResource
	fieldSubresource
	fieldNamespace
	fieldName
	fieldPath
	numFields
)

var fieldsByName = map[flowv1.RequestField]field{
	flowv1.FieldUser: fieldUser, flowv1.FieldGroups: fieldGroups, flowv1.FieldVerb: fieldVerb,
	flowv1.FieldAPIGroup: fieldAPIGroup, flowv1.FieldResource: fieldResource,
	flowv1.FieldSubresource: fieldSubresource, flowv1.FieldNamespace: fieldNamespace,
	flowv1.FieldName: fieldName, flowv1.FieldPath: fieldPath,
}

// indexPreference ranks the fields for filing a conjunction: the most selective first (a user
// or an object name usually narrows the candidates to a handful; a verb, to a third).
var indexPreference = [numFields]int{
	fieldUser: 0, fieldName: 1, fieldNamespace: 2, fieldPath: 3, fieldResource: 4,
	fieldGroups: 5, fieldSubresource: 6, fieldAPIGroup: 7, fieldVerb: 8,
}

// value returns the scalar attribute f of a and whether it is present (DESIGN.md decision 4).
// Groups is not scalar: it is never present here.
func value(a *request.Attributes, f field) (string, bool) {
	switch f {
	case fieldUser:
		return a.User, true
	case fieldVerb:
		return a.Verb, true
	case fieldPath:
		return a.Path, !a.ResourceRequest
	case fieldGroups:
		return "", false
	}
	if !a.ResourceRequest {
		return "", false
	}
	switch f {
	case fieldAPIGroup:
		return a.APIGroup, true
	case fieldResource:
		return a.Resource, true
	case fieldSubresource:
		return a.Subresource, true
	case fieldNamespace:
		return a.Namespace, true
	case fieldName:
		return a.Name, true
	}
	return "", false
}
