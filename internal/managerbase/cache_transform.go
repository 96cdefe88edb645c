package managerbase

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/defaults"
	"github.com/apf-operator/apf-operator/internal/native"
)

// CacheTransform drops, before an object is cached, the managedFields the operator never
// reads: at 11,000 objects they were a sixth of its live heap (docs/scale.md). It keeps:
//   - all of them on RequestPriorities and FlowSchemas named as a default (the defaults
//     reconciler reads who declared their spec, defaults.Declared);
//   - on native FlowSchemas, what tells whether the operator still owns matchingPrecedence
//     (the projection reads it), reduced to one entry (native.CacheManagedFields).
//
// The cached objects are read and updated (status) without managedFields, which an update
// then leaves as they are. Use it as the manager cache's DefaultTransform.
func CacheTransform(obj any) (any, error) {
	switch o := obj.(type) {
	case *flowv1.RequestPriority:
		if !defaultRequestPriorities[o.Name] {
			o.ManagedFields = nil
		}
	case *flowv1.FlowSchema:
		if !defaultFlowSchemas[o.Name] {
			o.ManagedFields = nil
		}
	case *flowcontrolv1.PriorityLevelConfiguration:
		o.ManagedFields = nil
	case *flowcontrolv1.FlowSchema:
		o.ManagedFields = native.CacheManagedFields(o)
	}
	return obj, nil
}

// defaultRequestPriorities and defaultFlowSchemas are the names of the defaults of either
// enforcement mode.
var defaultRequestPriorities, defaultFlowSchemas = defaults.Names()["RequestPriority"], defaults.Names()["FlowSchema"]
