package validate

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// overlapWarnings warns, for a FlowSchema without errors, about the others in the set at its
// matchingPriority whose matches intersect its own (validation.Overlaps): the webhook's
// warning, offline.
func overlapWarnings(ctx context.Context, fs *v1alpha1.FlowSchema, set *validation.Set, errs field.ErrorList) []string {
	if len(errs) > 0 {
		return nil
	}
	warnings, _ := validation.OverlapWarnings(ctx, fs, set, native.Intersect) // a Set never fails
	return warnings
}
