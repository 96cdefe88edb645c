package validation

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// maxNamedReferrers bounds how many referring FlowSchemas an ExemptReferrers message names.
const maxNamedReferrers = 5

// ExemptReferrers closes the back door to the exempt level: a FlowSchema that refers to a
// RequestPriority that does not exist yet is admitted with a warning, whoever its author, so a
// RequestPriority later created at level 0 under that name would make it exempt although its
// author never passed ExemptAccess.FlowSchema. It returns a Forbidden error on
// spec.priorityLevel when obj is created at level 0, or updated to level 0 from another level,
// while FlowSchemas refer to its name and do not resolve to the exempt level already; those
// with a reserved name (ReservedPrefix) do not count, since only allowed users may create them.
// It holds for every user: it is about the referrers' authors, not the RequestPriority's. The
// webhook alone applies it (offline manifests have no authors and no order). The error is a
// failure to read the other objects.
func ExemptReferrers(ctx context.Context, old, obj *v1alpha1.RequestPriority, others Objects) (field.ErrorList, error) {
	if obj.Spec.PriorityLevel != v1alpha1.ExemptPriorityLevel ||
		(old != nil && old.Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel) {
		return nil, nil
	}
	// A name that resolves to the exempt level already (the backstop system-top) makes no
	// referrer exempt that was not: their authors passed ExemptAccess.FlowSchema.
	current, err := ResolveRequestPriority(ctx, obj.Name, others)
	if err != nil || (current != nil && current.PriorityLevel == v1alpha1.ExemptPriorityLevel) {
		return nil, err
	}
	fss, err := others.FlowSchemasReferringTo(ctx, obj.Name)
	if err != nil {
		return nil, err
	}
	names := unreservedNames(fss)
	if len(names) == 0 {
		return nil, nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "priorityLevel"),
		exemptReferrersMessage(obj.Name, names))}, nil
}

// unreservedNames returns the sorted names of the FlowSchemas without ReservedPrefix.
func unreservedNames(fss []*v1alpha1.FlowSchema) []string {
	var names []string
	for _, fs := range fss {
		if !strings.HasPrefix(fs.Name, ReservedPrefix) {
			names = append(names, fs.Name)
		}
	}
	sort.Strings(names)
	return names
}

// exemptReferrersMessage names up to maxNamedReferrers referrers, how many more, and the fix.
func exemptReferrersMessage(name string, referrers []string) string {
	named, more := referrers, ""
	if len(named) > maxNamedReferrers {
		named, more = named[:maxNamedReferrers], fmt.Sprintf(" and %d more", len(referrers)-maxNamedReferrers)
	}
	return fmt.Sprintf("FlowSchema %s%s refer(s) to RequestPriority %q and would become exempt at level 0 although "+
		"their authors were never checked for the right to configure the exempt level: delete them, create this "+
		"RequestPriority, then re-create them as an exempt-allowed user (or give them the reserved %s prefix); "+
		"GitOps: apply level-0 RequestPriorities in an earlier sync wave than the FlowSchemas that refer to them",
		quoteAll(named), more, name, ReservedPrefix)
}
