package validation

import (
	"context"
	"fmt"
	"sort"

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
// carrying the record of exempt rights (v1alpha1.AnnotationExemptAuthorized, which only
// allowed users may write) do not count. The projector applies the same rule at every
// projection (internal/native exemptRefused), so a referrer this check never saw (stored while
// no webhook ran, or made exempt by the defaults' re-creation of system-top, which passes here
// because system-top resolves to the exempt backstop already) is not sent to the exempt level
// either.
// It holds for every user: it is about the referrers' authors, not the RequestPriority's. The
// webhook alone applies it (offline manifests have no authors and no order). The error is a
// failure to read the other objects.
func ExemptReferrers(ctx context.Context, old, obj *v1alpha1.RequestPriority, others Objects) (field.ErrorList, error) {
	if obj.Spec.PriorityLevel != v1alpha1.ExemptPriorityLevel ||
		(old != nil && old.Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel) {
		return nil, nil
	}
	// A name that resolves to the exempt level already (the backstop system-top) makes no
	// referrer exempt that was not; a referrer without the record is not projected onto the
	// exempt level whatever this check says.
	current, err := ResolveRequestPriority(ctx, obj.Name, others)
	if err != nil || (current != nil && current.PriorityLevel == v1alpha1.ExemptPriorityLevel) {
		return nil, err
	}
	fss, err := others.FlowSchemasReferringTo(ctx, obj.Name)
	if err != nil {
		return nil, err
	}
	names := unrecordedNames(fss)
	if len(names) == 0 {
		return nil, nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "priorityLevel"),
		exemptReferrersMessage(obj.Name, names))}, nil
}

// unrecordedNames returns the sorted names of the FlowSchemas without the record of exempt
// rights.
func unrecordedNames(fss []*v1alpha1.FlowSchema) []string {
	var names []string
	for _, fs := range fss {
		if !v1alpha1.ExemptAuthorized(fs) {
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
		"nothing records that their authors may configure the exempt level: have an exempt-allowed user set the "+
		"annotation %s: \"true\" on them (or delete them), then create this RequestPriority",
		quoteAll(named), more, name, v1alpha1.AnnotationExemptAuthorized)
}
