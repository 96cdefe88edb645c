// Package crdschema validates RequestPriority, FlowSchema and EventRateLimit objects against
// their CustomResourceDefinitions' own OpenAPI schemas and CEL rules (config/crd/bases,
// embedded), with k8s.io/apiextensions-apiserver's structural schema, defaulting, schema
// validator and CEL validator: the code kube-apiserver runs on a create, so that the offline
// validator and a live server cannot drift.
package crdschema

import (
	"context"
	"fmt"
	"io/fs"
	"sync"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/apf-operator/apf-operator/config/crd"
)

// kindSchema is what validating one kind's objects needs.
type kindSchema struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

var (
	loadOnce sync.Once
	schemas  map[string]*kindSchema // by "group/version/Kind"
	loadErr  error
)

// Validate checks obj (a decoded JSON object: map[string]any) of the given apiVersion and kind
// as kube-apiserver does on a create: CRD defaults are applied to a copy, then the OpenAPI
// schema validates it, then the CEL rules unless a schema error blocks them (a wrong type, a
// missing required field, a value outside an enum, too long or too many), as the API server
// skips them then. known is false when no embedded CRD serves apiVersion and kind.
func Validate(ctx context.Context, apiVersion, kind string, obj map[string]any) (errs field.ErrorList, known bool, err error) {
	loadOnce.Do(func() { schemas, loadErr = load(crd.Bases) })
	if loadErr != nil {
		return nil, false, loadErr
	}
	s := schemas[apiVersion+"/"+kind]
	if s == nil {
		return nil, false, nil
	}
	obj = runtime.DeepCopyJSON(obj)
	defaulting.Default(obj, s.structural)
	errs = apiservervalidation.ValidateCustomResource(nil, obj, s.validator)
	if s.cel != nil && !blocking(errs) {
		celErrs, _ := s.cel.Validate(ctx, nil, s.structural, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	return errs, true, nil
}

// blocking reports whether errs hold an error after which kube-apiserver does not run the CEL
// rules (the list of customresource's hasBlockingErr).
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong,
			field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// load reads every CRD of fsys and builds the validators of each served version.
func load(fsys fs.FS) (map[string]*kindSchema, error) {
	files, err := fs.Glob(fsys, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	out := map[string]*kindSchema{}
	for _, name := range files {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		var def apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(data, &def); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, v := range def.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			s, err := newKindSchema(v.Schema.OpenAPIV3Schema)
			if err != nil {
				return nil, fmt.Errorf("%s, version %s: %w", name, v.Name, err)
			}
			out[def.Spec.Group+"/"+v.Name+"/"+def.Spec.Names.Kind] = s
		}
	}
	return out, nil
}

// newKindSchema converts one version's v1 schema to the internal form and builds its
// structural schema, schema validator and CEL validator.
func newKindSchema(v1 *apiextensionsv1.JSONSchemaProps) (*kindSchema, error) {
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, &internal, nil); err != nil {
		return nil, err
	}
	structural, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, err
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(&internal)
	if err != nil {
		return nil, err
	}
	return &kindSchema{structural: structural, validator: validator,
		cel: cel.NewValidator(structural, true, celconfig.PerCallLimit)}, nil
}
