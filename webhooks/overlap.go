package webhooks

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/index"
	"github.com/apf-operator/apf-operator/internal/validation"
)

var _ validation.SamePriority = cacheObjects{}

// FlowSchemasAtMatchingPriority implements validation.SamePriority from the cache's
// spec.matchingPriority index.
func (c cacheObjects) FlowSchemasAtMatchingPriority(ctx context.Context, matchingPriority int32) ([]*v1alpha1.FlowSchema, error) {
	var list v1alpha1.FlowSchemaList
	if err := c.reader.List(ctx, &list, client.MatchingFields{index.FlowSchemaMatchingPriority: index.LevelKey(matchingPriority)},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make([]*v1alpha1.FlowSchema, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}
