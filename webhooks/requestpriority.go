package webhooks

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// +kubebuilder:webhook:path=/validate-flowcontrol-apf-operator-io-v1alpha1-requestpriority,mutating=false,failurePolicy=fail,sideEffects=None,groups=flowcontrol.apf-operator.io,resources=requestpriorities,verbs=create;update;delete,versions=v1alpha1,name=vrequestpriority.flowcontrol.apf-operator.io,admissionReviewVersions=v1

// RequestPriorityValidator admits RequestPriority objects: every rule of
// validation.RequestPriority against the stored objects, ExemptAccess for level 0 and the
// reserved names on create, update and delete, and validation.ExemptReferrers (no level 0
// under a name that FlowSchemas of unchecked authors already refer to).
type RequestPriorityValidator struct {
	// Objects are the stored objects (the manager's cache).
	Objects validation.Objects
	// Access says who may configure the exempt level.
	Access validation.ExemptAccess
	// NativeWarnings warns about what kube-apiserver could not enforce exactly.
	NativeWarnings bool
	// Shares, when set (enforcement native), checks the native share budget
	// (validation.RequestPriorityShares).
	Shares ShareTotals
	// Donors, when set (enforcement native), checks spec.sharesFrom against its donor
	// (validation.SharesFrom, sharesfrom.go).
	Donors DonorReader
}

var _ admission.Validator[*v1alpha1.RequestPriority] = &RequestPriorityValidator{}

// ValidateCreate implements admission.Validator.
func (v *RequestPriorityValidator) ValidateCreate(ctx context.Context, obj *v1alpha1.RequestPriority) (admission.Warnings, error) {
	return v.validate(ctx, nil, obj)
}

// ValidateUpdate implements admission.Validator.
func (v *RequestPriorityValidator) ValidateUpdate(ctx context.Context, old, obj *v1alpha1.RequestPriority) (admission.Warnings, error) {
	return v.validate(ctx, old, obj)
}

// ValidateDelete implements admission.Validator: only the users ExemptAccess allows may delete
// a level-0 RequestPriority or one with a reserved name.
func (v *RequestPriorityValidator) ValidateDelete(ctx context.Context, obj *v1alpha1.RequestPriority) (admission.Warnings, error) {
	user, err := requestUser(ctx)
	if err != nil {
		return nil, err
	}
	errs := append(v.Access.ReservedName(user, validation.OperationDelete, "RequestPriority", obj.Name),
		v.Access.RequestPriorityDelete(user, obj)...)
	return nil, invalid("RequestPriority", obj.Name, errs)
}

// validate checks a create (old == nil) or an update.
func (v *RequestPriorityValidator) validate(ctx context.Context, old, obj *v1alpha1.RequestPriority) (admission.Warnings, error) {
	user, err := requestUser(ctx)
	if err != nil {
		return nil, err
	}
	errs, warnings, err := validation.RequestPriority(ctx, old, obj, v.Objects)
	if err != nil {
		return nil, lookupError(err)
	}
	referrers, err := validation.ExemptReferrers(ctx, old, obj, v.Objects)
	if err != nil {
		return nil, lookupError(err)
	}
	errs = append(append(v.Access.ReservedName(user, operation(old), "RequestPriority", obj.Name),
		v.Access.RequestPriority(user, old, obj)...), append(errs, referrers...)...)
	if v.Shares != nil && len(errs) == 0 {
		b, others, err := v.Shares.Budget(ctx, obj.Name)
		if err != nil {
			return nil, lookupError(err)
		}
		errs = validation.RequestPriorityShares(old, obj, others, b)
		if bt, ok := v.Shares.(BorrowingTotals); ok && len(errs) == 0 {
			borrowing, err := bt.Borrowing(ctx, obj.Name)
			if err != nil {
				return nil, lookupError(err)
			}
			errs = validation.RequestPriorityBorrowing(old, obj, borrowing, b)
		}
	}
	if len(errs) == 0 {
		if errs, err = sharesFromErrors(ctx, v.Donors, old, obj); err != nil {
			return nil, lookupError(err)
		}
	}
	if v.NativeWarnings && len(errs) == 0 {
		warnings = append(warnings, nativeWarnings("RequestPriority", obj.Name, native.LevelErrors(&obj.Spec))...)
	}
	return warnings, invalid("RequestPriority", obj.Name, errs)
}
