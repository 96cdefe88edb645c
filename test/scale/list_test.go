package scale

import (
	"context"

	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/apf-operator/apf-operator/internal/native"
)

type (
	flowcontrolPLCList = flowcontrolv1.PriorityLevelConfigurationList
	flowcontrolFSList  = flowcontrolv1.FlowSchemaList
)

// pageSize bounds each list request of the convergence check.
const pageSize = 500

// eachPage lists every object of list's kind in pages, calls fn with each page and returns
// how many objects there were.
func eachPage(ctx context.Context, c client.Client, list client.ObjectList, fn func(client.ObjectList) error) (int, error) {
	total, next := 0, ""
	for {
		if err := c.List(ctx, list, client.Limit(pageSize), client.Continue(next)); err != nil {
			return 0, err
		}
		if err := fn(list); err != nil {
			return 0, err
		}
		total += meta.LenList(list)
		if next = list.GetContinue(); next == "" {
			return total, nil
		}
	}
}

// ownedNames returns the names of the native objects the operator owns.
func ownedNames(ctx context.Context, c client.Client, list client.ObjectList) (map[string]bool, error) {
	names := map[string]bool{}
	_, err := eachPage(ctx, c, list, func(page client.ObjectList) error {
		return meta.EachListItem(page, func(obj runtime.Object) error {
			if o, ok := obj.(client.Object); ok && native.Owned(o) {
				names[o.GetName()] = true
			}
			return nil
		})
	})
	return names, err
}

// eventsByReason counts the events of every namespace by reason.
func eventsByReason(ctx context.Context, c client.Client) (map[string]int, error) {
	out := map[string]int{}
	var list eventsv1.EventList
	if err := c.List(ctx, &list); err != nil {
		return nil, err
	}
	for _, e := range list.Items {
		out[e.Reason]++
	}
	return out, nil
}
