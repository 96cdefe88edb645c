package validation

import (
	"context"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// ReservedPrefix starts the names reserved for the system's own objects, as the system
// PriorityClass names are (seed 002, "System Priority Class Names"): the default objects
// system-top, system-high and system-low, and the backstops, carry it. Only the users ExemptAccess
// allows may create, update or delete a RequestPriority or FlowSchema whose name starts with it.
const ReservedPrefix = "system-"

// Operation is the admission operation an ExemptAccess check is about, as messages name it.
type Operation string

// The operations ExemptAccess checks.
const (
	OperationCreate Operation = "create"
	OperationUpdate Operation = "update"
	OperationDelete Operation = "delete"
)

// ReservedName returns a Forbidden error on metadata.name when name carries ReservedPrefix and
// user may not op the object of kind (RequestPriority or FlowSchema) it names.
func (a ExemptAccess) ReservedName(user authenticationv1.UserInfo, op Operation, kind, name string) field.ErrorList {
	if !strings.HasPrefix(name, ReservedPrefix) || a.Allows(user) {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("metadata", "name"), fmt.Sprintf(
		"user %q may not %s %s %q: names starting with %q are reserved for the system's objects and %s; "+
			"choose a name without the prefix or ask a cluster administrator",
		user.Username, op, kind, name, ReservedPrefix, a.who()))}
}

// RequestPriorityDelete returns a Forbidden error on spec.priorityLevel when obj has the exempt
// level and user may not delete it: deleting the last level-0 object would leave only the
// backstop, and deleting any changes which requests escape every limit.
func (a ExemptAccess) RequestPriorityDelete(user authenticationv1.UserInfo, obj *v1alpha1.RequestPriority) field.ErrorList {
	if obj.Spec.PriorityLevel != v1alpha1.ExemptPriorityLevel || a.Allows(user) {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "priorityLevel"), fmt.Sprintf(
		"user %q may not delete RequestPriority %q at the exempt level 0: %s; ask a cluster administrator",
		user.Username, obj.Name, a.who()))}
}

// FlowSchemaDelete returns a Forbidden error when user may not configure the exempt level and
// obj carries the record of exempt rights or refers to system-top or to a RequestPriority that
// resolves to the exempt level (as ExemptAccess.FlowSchema, and kube-apiserver's policy). The
// error is a failure to read the other objects.
func (a ExemptAccess) FlowSchemaDelete(ctx context.Context, user authenticationv1.UserInfo, obj *v1alpha1.FlowSchema, others Objects) (field.ErrorList, error) {
	if a.Allows(user) {
		return nil, nil
	}
	if v1alpha1.ExemptAuthorized(obj) {
		return a.FlowSchema(ctx, user, nil, obj, others)
	}
	name := obj.Spec.RequestPriority.Name
	exempt, err := resolvesToExempt(ctx, name, others)
	if err != nil || !exempt {
		return nil, err
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "requestPriority", "name"), fmt.Sprintf(
		"user %q may not delete FlowSchema %q, which refers to RequestPriority %q at the exempt level 0: "+
			"%s; ask a cluster administrator", user.Username, obj.Name, name, a.who()))}, nil
}
