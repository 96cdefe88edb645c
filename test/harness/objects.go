package harness

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// Scheme returns a scheme with the built-in kinds and the project's API types.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(flowv1.AddToScheme(s))
	return s
}

// Client returns an admin client of the cluster that knows the project's API types.
func (c *Cluster) Client() (client.Client, error) {
	return client.New(c.Config, client.Options{Scheme: Scheme()})
}

// Objects lists every RequestPriority and FlowSchema, keyed "rp/<name>" and "fs/<name>", with
// their conditions.
func Objects(ctx context.Context, k8s client.Client) (map[string]Object, error) {
	var rps flowv1.RequestPriorityList
	var fss flowv1.FlowSchemaList
	if err := k8s.List(ctx, &rps); err != nil {
		return nil, err
	}
	if err := k8s.List(ctx, &fss); err != nil {
		return nil, err
	}
	out := make(map[string]Object, len(rps.Items)+len(fss.Items))
	for i := range rps.Items {
		o := &rps.Items[i]
		out["rp/"+o.Name] = Object{Object: o, Conditions: o.Status.Conditions}
	}
	for i := range fss.Items {
		o := &fss.Items[i]
		out["fs/"+o.Name] = Object{Object: o, Conditions: o.Status.Conditions}
	}
	return out, nil
}

// Object is a RequestPriority or FlowSchema with its status conditions.
type Object struct {
	client.Object
	Conditions []metav1.Condition
}

// MapObjects lists every RequestPriority and FlowSchema (Objects) and returns f of each, under
// the same keys.
func MapObjects[V any](ctx context.Context, k8s client.Client, f func(Object) V) (map[string]V, error) {
	objs, err := Objects(ctx, k8s)
	if err != nil {
		return nil, err
	}
	out := make(map[string]V, len(objs))
	for key, o := range objs {
		out[key] = f(o)
	}
	return out, nil
}

// ReadyObjects lists every RequestPriority and FlowSchema and returns, keyed "rp/<name>" and
// "fs/<name>", whether each reports Ready=True.
func ReadyObjects(ctx context.Context, k8s client.Client) (map[string]bool, error) {
	return MapObjects(ctx, k8s, func(o Object) bool { return meta.IsStatusConditionTrue(o.Conditions, flowv1.ConditionReady) })
}

// Conditions returns the status conditions of a RequestPriority or a FlowSchema (nil for any
// other kind).
func Conditions(obj client.Object) []metav1.Condition {
	switch o := obj.(type) {
	case *flowv1.RequestPriority:
		return o.Status.Conditions
	case *flowv1.FlowSchema:
		return o.Status.Conditions
	}
	return nil
}

// ProjectedNow returns nil when obj, a RequestPriority or a FlowSchema, reports Projected=True
// for its current generation, and else an error naming it and its Projected condition.
func ProjectedNow(obj client.Object) error {
	c := meta.FindStatusCondition(Conditions(obj), flowv1.ConditionProjected)
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != obj.GetGeneration() {
		return fmt.Errorf("%T %s: Projected condition %+v at generation %d", obj, obj.GetName(), c, obj.GetGeneration())
	}
	return nil
}
