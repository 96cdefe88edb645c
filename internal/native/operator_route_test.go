package native

import (
	"slices"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apf/request"
	"github.com/apf-operator/apf-operator/internal/native/nativetest"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

var operatorSA = &ServiceAccount{Namespace: "apf-system", Name: "apf-operator"}

// suggestedLevels are kube-apiserver's bootstrap levels, as a stock cluster has them.
func suggestedLevels(except ...string) []flowcontrolv1.PriorityLevelConfiguration {
	var out []flowcontrolv1.PriorityLevelConfiguration
	for _, l := range bootstrapset.PriorityLevels() {
		if !slices.Contains(except, l.Name) {
			out = append(out, l)
		}
	}
	return out
}

// everything is a user configuration whose one FlowSchema takes every request, ahead of the rest.
func everything() *effective.Config {
	rp := flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: "tiny"}, Spec: flowv1.RequestPrioritySpec{
		PriorityLevel: 100, AssuredConcurrencyShares: ptr.To[int32](1), QueuesPerWidth: ptr.To[int32](1),
		QueueLengthLimit: ptr.To[int32](1)}}
	fs := flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "all"}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: 1, RequestPriority: flowv1.RequestPriorityReference{Name: "tiny"},
		Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{}}}}}
	return effective.Compute([]flowv1.RequestPriority{rp}, []flowv1.FlowSchema{fs})
}

func planFlowSchema(plan *Plan, name string) *flowcontrolv1.FlowSchema {
	for i := range plan.FlowSchemas {
		if plan.FlowSchemas[i].Name == name {
			return &plan.FlowSchemas[i]
		}
	}
	return nil
}

// TestOperatorRouteTakesTheOperatorsRequests checks that, with kube-apiserver's own schemas and
// a user configuration that takes every request, kube-apiserver's classification sends every
// request of the operator's service account to apf.operator on workload-high, and nobody else's.
func TestOperatorRouteTakesTheOperatorsRequests(t *testing.T) {
	plan := Project(everything(), Existing{PriorityLevels: suggestedLevels(), Operator: operatorSA})
	route := planFlowSchema(plan, OperatorRouteName)
	if route == nil || !plan.OperatorRoute.Projected {
		t.Fatalf("no route in the plan: %+v", plan.OperatorRoute)
	}
	if got := route.Annotations[flowv1.AnnotationSource]; got != "Operator/apf-system/apf-operator" || !Owned(route) {
		t.Errorf("source = %q, owned %v", got, Owned(route))
	}
	kube := nativetest.Start(t, append(suggestedLevels(), plan.PriorityLevels...),
		append(bootstrapset.FlowSchemas(), plan.FlowSchemas...))
	defer kube.Close()
	operator := []string{"system:serviceaccounts", "system:serviceaccounts:apf-system", "system:authenticated"}
	for _, a := range []request.Attributes{
		{Verb: "list", ResourceRequest: true, APIGroup: "flowcontrol.apf-operator.io", Resource: "flowschemas"},
		{Verb: "patch", ResourceRequest: true, APIGroup: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas", Name: "apf-x"},
		{Verb: "update", ResourceRequest: true, APIGroup: "flowcontrol.apf-operator.io", Resource: "requestpriorities", Subresource: "status", Name: "x"},
		{Verb: "update", ResourceRequest: true, APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "apf-system", Name: "lock"},
		{Verb: "get", Path: "/version"},
	} {
		a.User, a.Groups = operatorSA.Username(), operator
		if got := kube.Pick(&a); got != OperatorRouteName || route.Spec.PriorityLevelConfiguration.Name != "workload-high" {
			t.Errorf("%+v: kube-apiserver picks %s (the route on %s), want %s on workload-high", a, got,
				route.Spec.PriorityLevelConfiguration.Name, OperatorRouteName)
		}
		a.User = "system:serviceaccount:apf-system:someone-else"
		if got := kube.Pick(&a); got != NativeName("all") {
			t.Errorf("another service account's %+v: kube-apiserver picks %s, want the user's schema", a, got)
		}
	}
}

// TestOperatorRouteLevelAndAbsence checks the level the route refers to, and that there is no
// route (with a reason) when the service account is unknown, invalid, or has no level to use.
func TestOperatorRouteLevelAndAbsence(t *testing.T) {
	for _, c := range []struct {
		name   string
		sa     *ServiceAccount
		levels []flowcontrolv1.PriorityLevelConfiguration
		level  string // "" when no route
		reason string
	}{
		{"stock cluster", operatorSA, suggestedLevels(), "workload-high", flowv1.ReasonProjected},
		{"no workload-high", operatorSA, suggestedLevels("workload-high"), "global-default", flowv1.ReasonProjected},
		{"neither", operatorSA, suggestedLevels("workload-high", "global-default"), "", flowv1.ReasonRequestPriorityNotProjected},
		{"unknown service account", nil, suggestedLevels(), "", ""},
		{"invalid namespace", &ServiceAccount{Namespace: "Apf_System", Name: "x"}, suggestedLevels(), "", flowv1.ReasonNotExpressible},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := Project(everything(), Existing{PriorityLevels: c.levels, Operator: c.sa})
			route := planFlowSchema(plan, OperatorRouteName)
			switch {
			case c.level == "" && route != nil:
				t.Fatalf("unexpected route %+v", route.Spec)
			case c.level != "" && (route == nil || route.Spec.PriorityLevelConfiguration.Name != c.level):
				t.Fatalf("route = %+v, want one on %s", route, c.level)
			case c.level != "" && route.Spec.MatchingPrecedence != MinPrecedence-1:
				t.Errorf("precedence = %d, want %d", route.Spec.MatchingPrecedence, MinPrecedence-1)
			}
			if plan.OperatorRoute.Reason != c.reason || plan.OperatorRoute.Message == "" {
				t.Errorf("route result = %+v, want reason %q and a message", plan.OperatorRoute, c.reason)
			}
		})
	}
}

// TestOperatorRouteOwnership checks that an owned route is kept while wanted and pruned when
// not, and that a route-named object someone else owns is never touched.
func TestOperatorRouteOwnership(t *testing.T) {
	owned := operatorRoute(operatorSA, "workload-high", MinPrecedence-1)
	foreign := *owned.DeepCopy()
	foreign.Labels = nil

	kept := Project(everything(), Existing{PriorityLevels: suggestedLevels(), Operator: operatorSA,
		FlowSchemas: []flowcontrolv1.FlowSchema{owned}})
	if slices.Contains(kept.StaleFlowSchemas, OperatorRouteName) || planFlowSchema(kept, OperatorRouteName) == nil {
		t.Errorf("a wanted route must be kept: stale %v", kept.StaleFlowSchemas)
	}
	pruned := Project(everything(), Existing{PriorityLevels: suggestedLevels(), FlowSchemas: []flowcontrolv1.FlowSchema{owned}})
	if !slices.Contains(pruned.StaleFlowSchemas, OperatorRouteName) {
		t.Errorf("a route no longer wanted must be pruned: stale %v", pruned.StaleFlowSchemas)
	}
	conflict := Project(everything(), Existing{PriorityLevels: suggestedLevels(), Operator: operatorSA,
		FlowSchemas: []flowcontrolv1.FlowSchema{foreign}})
	if planFlowSchema(conflict, OperatorRouteName) != nil || slices.Contains(conflict.StaleFlowSchemas, OperatorRouteName) ||
		conflict.OperatorRoute.Reason != flowv1.ReasonNameConflict {
		t.Errorf("someone else's %s must be left alone: %+v", OperatorRouteName, conflict.OperatorRoute)
	}
	if !strings.HasPrefix(OperatorRouteName, backstopPrefix) {
		t.Errorf("%s must take the apf. form no API object's projection takes", OperatorRouteName)
	}
}
