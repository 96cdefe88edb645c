package webhooks

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// +kubebuilder:webhook:path=/validate-flowcontrol-apf-operator-io-v1alpha1-eventratelimit,mutating=false,failurePolicy=fail,sideEffects=None,groups=flowcontrol.apf-operator.io,resources=eventratelimits,verbs=create;update,versions=v1alpha1,name=veventratelimit.flowcontrol.apf-operator.io,admissionReviewVersions=v1

// EventRateLimitValidator admits EventRateLimit objects that pass
// validation.EventRateLimitSpec.
type EventRateLimitValidator struct{}

var _ admission.Validator[*v1alpha1.EventRateLimit] = &EventRateLimitValidator{}

// ValidateCreate implements admission.Validator.
func (v *EventRateLimitValidator) ValidateCreate(_ context.Context, obj *v1alpha1.EventRateLimit) (admission.Warnings, error) {
	return nil, v.validate(obj)
}

// ValidateUpdate implements admission.Validator.
func (v *EventRateLimitValidator) ValidateUpdate(_ context.Context, _, obj *v1alpha1.EventRateLimit) (admission.Warnings, error) {
	return nil, v.validate(obj)
}

// ValidateDelete implements admission.Validator; deletion is not checked (the webhook is not
// registered for it).
func (v *EventRateLimitValidator) ValidateDelete(context.Context, *v1alpha1.EventRateLimit) (admission.Warnings, error) {
	return nil, nil
}

func (v *EventRateLimitValidator) validate(obj *v1alpha1.EventRateLimit) error {
	return invalid("EventRateLimit", obj.Name, validation.EventRateLimitSpec(&obj.Spec, field.NewPath("spec")))
}
