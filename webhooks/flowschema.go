package webhooks

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// +kubebuilder:webhook:path=/validate-flowcontrol-apf-operator-io-v1alpha1-flowschema,mutating=false,failurePolicy=fail,sideEffects=None,groups=flowcontrol.apf-operator.io,resources=flowschemas,verbs=create;update;delete,versions=v1alpha1,name=vflowschema.flowcontrol.apf-operator.io,admissionReviewVersions=v1

// FlowSchemaValidator admits FlowSchema objects: every rule of validation.FlowSchema against
// the stored objects, and ExemptAccess for FlowSchemas that refer to the exempt level and for
// the reserved names on create, update and delete.
type FlowSchemaValidator struct {
	// Objects are the stored objects (the manager's cache).
	Objects validation.Objects
	// Access says who may configure the exempt level.
	Access validation.ExemptAccess
	// NativeWarnings warns about what kube-apiserver could not enforce exactly.
	NativeWarnings bool
}

var _ admission.Validator[*v1alpha1.FlowSchema] = &FlowSchemaValidator{}

// ValidateCreate implements admission.Validator.
func (v *FlowSchemaValidator) ValidateCreate(ctx context.Context, obj *v1alpha1.FlowSchema) (admission.Warnings, error) {
	return v.validate(ctx, nil, obj)
}

// ValidateUpdate implements admission.Validator.
func (v *FlowSchemaValidator) ValidateUpdate(ctx context.Context, old, obj *v1alpha1.FlowSchema) (admission.Warnings, error) {
	return v.validate(ctx, old, obj)
}

// ValidateDelete implements admission.Validator: only the users ExemptAccess allows may delete
// a FlowSchema that refers to the exempt level or one with a reserved name.
func (v *FlowSchemaValidator) ValidateDelete(ctx context.Context, obj *v1alpha1.FlowSchema) (admission.Warnings, error) {
	user, err := requestUser(ctx)
	if err != nil {
		return nil, err
	}
	denied, err := v.Access.FlowSchemaDelete(ctx, user, obj, v.Objects)
	if err != nil {
		return nil, lookupError(err)
	}
	errs := append(v.Access.ReservedName(user, validation.OperationDelete, "FlowSchema", obj.Name), denied...)
	return nil, invalid("FlowSchema", obj.Name, errs)
}

// validate checks a create (old == nil) or an update.
func (v *FlowSchemaValidator) validate(ctx context.Context, old, obj *v1alpha1.FlowSchema) (admission.Warnings, error) {
	user, err := requestUser(ctx)
	if err != nil {
		return nil, err
	}
	errs, warnings, err := validation.FlowSchema(ctx, old, obj, v.Objects)
	if err != nil {
		return nil, lookupError(err)
	}
	denied, err := v.Access.FlowSchema(ctx, user, old, obj, v.Objects)
	if err != nil {
		return nil, lookupError(err)
	}
	errs = append(append(v.Access.ReservedName(user, operation(old), "FlowSchema", obj.Name), denied...), errs...)
	if v.NativeWarnings && len(errs) == 0 {
		warnings = append(warnings, nativeWarnings("FlowSchema", obj.Name, native.MatchErrors(&obj.Spec))...)
	}
	if peers, ok := v.Objects.(validation.SamePriority); ok && len(errs) == 0 {
		overlaps, err := validation.OverlapWarningsWithin(ctx, obj, peers, native.Intersect, validation.AdmissionOverlapPairs)
		if err != nil {
			return nil, lookupError(err)
		}
		warnings = append(warnings, overlaps...)
	}
	return warnings, invalid("FlowSchema", obj.Name, errs)
}
