package webhooks

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/index"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// cacheObjects implements validation.Objects over a cache reader with the field indexes of
// internal/index registered: every lookup reads one index entry (or one key), so its cost does
// not grow with the number of stored objects.
type cacheObjects struct {
	reader client.Reader
}

var _ validation.Objects = cacheObjects{}

// RequestPriority implements validation.Objects.
func (c cacheObjects) RequestPriority(ctx context.Context, name string) (*v1alpha1.RequestPriority, error) {
	rp := &v1alpha1.RequestPriority{}
	if err := c.reader.Get(ctx, client.ObjectKey{Name: name}, rp); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return rp, nil
}

// RequestPrioritiesAtLevel implements validation.Objects.
func (c cacheObjects) RequestPrioritiesAtLevel(ctx context.Context, level int32) ([]*v1alpha1.RequestPriority, error) {
	var list v1alpha1.RequestPriorityList
	if err := c.reader.List(ctx, &list, client.MatchingFields{index.RequestPriorityLevel: index.LevelKey(level)},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make([]*v1alpha1.RequestPriority, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// FlowSchemasReferringTo implements validation.Objects.
func (c cacheObjects) FlowSchemasReferringTo(ctx context.Context, name string) ([]*v1alpha1.FlowSchema, error) {
	var list v1alpha1.FlowSchemaList
	if err := c.reader.List(ctx, &list, client.MatchingFields{index.FlowSchemaRequestPriority: name},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make([]*v1alpha1.FlowSchema, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// nativeWarnings turns the reasons an object cannot be projected into admission warnings: the
// object is admitted (the in-process classifier and explain take it) but kube-apiserver will not
// enforce it.
func nativeWarnings(kind, name string, errs field.ErrorList) admission.Warnings {
	out := make(admission.Warnings, 0, len(errs))
	for _, err := range errs {
		out = append(out, fmt.Sprintf("%s %q will not be enforced by kube-apiserver (reported as Projected=False): %s",
			kind, name, err.Error()))
	}
	return out
}
