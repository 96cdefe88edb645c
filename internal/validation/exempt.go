package validation

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// MastersGroup is the group that may always configure the exempt level, whatever the
// configured groups: like kube-apiserver, which never lets configuration lock its
// administrators out, the operator never lets its own flags do so.
const MastersGroup = "system:masters"

// ExemptAccess says who may create, update or delete objects that configure the exempt level 0,
// in the spirit of the system PriorityClasses: a level-0 RequestPriority, and a FlowSchema that
// refers (or referred, before the update) to one. Such objects decide which requests escape
// every limit, so only the listed users and the members of the listed groups may change them;
// the same users alone may touch the objects with reserved names (ReservedName). Members of
// MastersGroup are always allowed, whether Groups lists it or not.
type ExemptAccess struct {
	// Groups whose members are allowed besides MastersGroup (for example platform-admins).
	Groups []string
	// Users allowed by name (for example the operator's own service account,
	// system:serviceaccount:<namespace>:<name>).
	Users []string
}

// DefaultExemptAccess allows system:masters and the given users (the operator's own service
// account).
func DefaultExemptAccess(users ...string) ExemptAccess {
	return ExemptAccess{Groups: []string{MastersGroup}, Users: users}
}

// Allows reports whether user is one of Users or a member of MastersGroup or of one of Groups.
func (a ExemptAccess) Allows(user authenticationv1.UserInfo) bool {
	if slices.Contains(a.Users, user.Username) {
		return true
	}
	for _, g := range user.Groups {
		if g == MastersGroup || slices.Contains(a.Groups, g) {
			return true
		}
	}
	return false
}

// groups returns the allowed groups for messages: MastersGroup first, then Groups.
func (a ExemptAccess) groups() []string {
	out := []string{MastersGroup}
	for _, g := range a.Groups {
		if g != MastersGroup {
			out = append(out, g)
		}
	}
	return out
}

// RequestPriority returns a Forbidden error on spec.priorityLevel when obj (or old, on update)
// has the exempt level and user may not configure it.
func (a ExemptAccess) RequestPriority(user authenticationv1.UserInfo, old, obj *v1alpha1.RequestPriority) field.ErrorList {
	exempt := obj.Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel ||
		(old != nil && old.Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel)
	if (!exempt && !bindsExempt(old, obj)) || a.Allows(user) {
		return nil
	}
	if !exempt {
		return bindExemptForbidden(user, a.who())
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "priorityLevel"), fmt.Sprintf(
		"user %q may not create or update a RequestPriority at the exempt level 0: %s; use a priorityLevel above 0 "+
			"or ask a cluster administrator", user.Username, a.who()))}
}

// FlowSchema returns a Forbidden error on spec.requestPriority.name when the RequestPriority
// that obj (or old, on update) refers to resolves to the exempt level and user may not
// configure it. The error is a failure to read the other objects.
func (a ExemptAccess) FlowSchema(ctx context.Context, user authenticationv1.UserInfo, old, obj *v1alpha1.FlowSchema, others Objects) (field.ErrorList, error) {
	if a.Allows(user) {
		return nil, nil
	}
	names := []string{obj.Spec.RequestPriority.Name}
	if old != nil && old.Spec.RequestPriority.Name != names[0] {
		names = append(names, old.Spec.RequestPriority.Name)
	}
	for _, name := range names {
		rp, err := ResolveRequestPriority(ctx, name, others)
		if err != nil {
			return nil, err
		}
		if rp != nil && (rp.PriorityLevel == v1alpha1.ExemptPriorityLevel || rp.NativeLevel == ExemptLevelName) {
			return field.ErrorList{field.Forbidden(field.NewPath("spec", "requestPriority", "name"), fmt.Sprintf(
				"user %q may not create or update a FlowSchema that refers to RequestPriority %q at the exempt level 0: "+
					"%s; refer to a RequestPriority above level 0 or ask a cluster administrator",
				user.Username, name, a.who()))}, nil
		}
	}
	return nil, nil
}

// who lists the allowed groups and users for messages.
func (a ExemptAccess) who() string {
	who := "only members of " + listed("group", a.groups())
	if len(a.Users) > 0 {
		who += " or " + listed("user", a.Users)
	}
	return who + " may"
}

// listed is "<noun> a" for one name and "<noun>s a, b" for several.
func listed(noun string, names []string) string {
	if len(names) > 1 {
		noun += "s"
	}
	return noun + " " + strings.Join(names, ", ")
}
