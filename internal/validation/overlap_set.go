package validation

import (
	"context"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

var _ SamePriority = (*Set)(nil)

// FlowSchemasAtMatchingPriority implements SamePriority. A Set is small (a set of manifests),
// so it scans; the webhook's cache reads an index instead.
func (s *Set) FlowSchemasAtMatchingPriority(_ context.Context, matchingPriority int32) ([]*v1alpha1.FlowSchema, error) {
	var out []*v1alpha1.FlowSchema
	for _, fss := range s.byReference {
		for _, fs := range fss {
			if fs.Spec.MatchingPriority == matchingPriority {
				out = append(out, fs)
			}
		}
	}
	return out, nil
}
