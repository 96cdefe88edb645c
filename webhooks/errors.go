package webhooks

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// invalid returns nil for no errors, else the Invalid status error kubectl renders with
// field paths.
func invalid(kind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: v1alpha1.GroupVersion.Group, Kind: kind}, name, errs)
}

// lookupError reports a failure to read the other objects; the API server then rejects the
// request (failurePolicy Fail) and the client may retry.
func lookupError(err error) error {
	return apierrors.NewServiceUnavailable(fmt.Sprintf("cannot read the other APF objects from the cache: %v", err))
}

// requestUser returns the user who sent the admission request.
func requestUser(ctx context.Context) (authenticationv1.UserInfo, error) {
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return authenticationv1.UserInfo{}, apierrors.NewBadRequest("admission request missing from the context: " + err.Error())
	}
	return req.UserInfo, nil
}

// operation names a create (old == nil) or an update for ExemptAccess messages.
func operation[T any](old *T) validation.Operation {
	if old == nil {
		return validation.OperationCreate
	}
	return validation.OperationUpdate
}
