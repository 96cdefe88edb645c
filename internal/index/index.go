// Package index registers the cache field indexes that the webhooks and reconcilers query, so
// that a uniqueness or reference check reads one index entry instead of listing every object.
// Register is called once per manager; registering the same index twice is an error in
// controller-runtime, which is why the indexes live here and not in their users.
package index

import (
	"context"
	"strconv"

	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

const (
	// RequestPriorityLevel indexes RequestPriority objects by spec.priorityLevel (decimal).
	RequestPriorityLevel = "spec.priorityLevel"
	// FlowSchemaRequestPriority indexes FlowSchema objects by spec.requestPriority.name.
	FlowSchemaRequestPriority = "spec.requestPriority.name"
	// FlowSchemaMatchingPriority indexes FlowSchema objects by spec.matchingPriority (decimal),
	// for the webhook's overlap warning.
	FlowSchemaMatchingPriority = "spec.matchingPriority"
)

// LevelKey is the index value of a priority level.
func LevelKey(level int32) string { return strconv.FormatInt(int64(level), 10) }

// Register adds the indexes to the manager's field indexer.
func Register(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &flowv1.RequestPriority{}, RequestPriorityLevel,
		func(o client.Object) []string {
			return []string{LevelKey(o.(*flowv1.RequestPriority).Spec.PriorityLevel)}
		}); err != nil {
		return err
	}
	if err := indexer.IndexField(ctx, &flowv1.FlowSchema{}, FlowSchemaRequestPriority,
		func(o client.Object) []string {
			return []string{o.(*flowv1.FlowSchema).Spec.RequestPriority.Name}
		}); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &flowv1.FlowSchema{}, FlowSchemaMatchingPriority,
		func(o client.Object) []string {
			return []string{LevelKey(o.(*flowv1.FlowSchema).Spec.MatchingPriority)}
		})
}
