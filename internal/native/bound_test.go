package native_test

import (
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/utils/ptr"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/native"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

func boundRP(name string, level int32, nativeLevel string) flowv1.RequestPriority {
	rp := requestPriority(name, level, 1, 0)
	rp.Spec = flowv1.RequestPrioritySpec{PriorityLevel: level, NativeLevel: nativeLevel}
	return rp
}

func toLevel(name, rp string) flowv1.FlowSchema {
	return flowSchema(name, 10, rp, nil, apitest.And(apitest.Equals(flowv1.FieldUser, name)))
}

func stockCluster() native.Existing {
	return native.Existing{PriorityLevels: bootstrapset.PriorityLevels(), FlowSchemas: bootstrapset.FlowSchemas()}
}

// TestBoundLevelProjection: a bound RequestPriority writes no level and charges no shares; its
// FlowSchemas are projected onto the named level; status names that level and says Bound.
func TestBoundLevelProjection(t *testing.T) {
	rps := []flowv1.RequestPriority{boundRP("high", 100, "workload-high"),
		withShares(requestPriority("tenant", 200, 1, 0), 27)} // the whole default budget
	bigShares := boundRP("big", 300, "global-default")
	bigShares.Spec.AssuredConcurrencyShares = ptr.To[int32](5000)
	rps = append(rps, bigShares)
	plan := native.Project(effective.Compute(rps, []flowv1.FlowSchema{toLevel("to-high", "high"), toLevel("to-big", "big")}),
		stockCluster())
	for name, level := range map[string]string{"high": "workload-high", "big": "global-default"} {
		res := plan.RequestPriorities[name]
		if !res.Projected || res.Reason != flowv1.ReasonBound || res.NativeName != level {
			t.Errorf("RequestPriority %s: %+v, want Projected, reason Bound, native name %s", name, res, level)
		}
	}
	if res := plan.RequestPriorities["tenant"]; !res.Projected {
		t.Errorf("tenant (27 shares) not projected beside bound levels (they charge nothing): %+v", res)
	}
	for _, plc := range plan.PriorityLevels {
		if plc.Name != "apf-tenant" {
			t.Errorf("the plan writes the level %s; only apf-tenant is the operator's", plc.Name)
		}
	}
	if got := schemaLevel(t, plan, "apf-to-high"); got != "workload-high" {
		t.Errorf("FlowSchema to-high projected onto %q, want workload-high", got)
	}
	msg := plan.RequestPriorities["high"].Message
	if !strings.Contains(msg, "spec.priorityLevel") || !strings.Contains(msg, "request width") {
		t.Errorf("bound message lacks the order and width differences: %s", msg)
	}
	if strings.Contains(msg, "spec.assuredConcurrencyShares") || strings.Contains(msg, "spec.queuesPerWidth") {
		t.Errorf("bound message lists fields whose in-process values are workload-high's own: %s", msg)
	}
	if !strings.Contains(plan.RequestPriorities["big"].Message, "spec.assuredConcurrencyShares: in-process uses 5000; kube-apiserver uses global-default's 20") {
		t.Errorf("big: the shares given in the spec are not reported as differing: %s", plan.RequestPriorities["big"].Message)
	}
}

func schemaLevel(t *testing.T, plan *native.Plan, name string) string {
	t.Helper()
	for _, fs := range plan.FlowSchemas {
		if fs.Name == name {
			return fs.Spec.PriorityLevelConfiguration.Name
		}
	}
	t.Fatalf("no native FlowSchema %s in the plan", name)
	return ""
}

// TestBoundLevelRefusals: a missing target, an owned target and exempt without a record of
// exempt rights leave the RequestPriority and its FlowSchemas not projected, never elsewhere.
func TestBoundLevelRefusals(t *testing.T) {
	owned := flowcontrolv1.PriorityLevelConfiguration{}
	owned.Name = "apf-tenant"
	owned.Labels = map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue}
	owned.Annotations = map[string]string{flowv1.AnnotationSource: "RequestPriority/tenant"}
	ghost := flowcontrolv1.PriorityLevelConfiguration{} // the operator's label, no source annotation
	ghost.Name = "apf-ghost"
	ghost.Labels = map[string]string{flowv1.LabelManagedBy: flowv1.ManagedByValue}
	existing := stockCluster()
	existing.PriorityLevels = append(existing.PriorityLevels, owned, ghost)
	for _, c := range []struct {
		target, reason string
		mayExempt      bool
	}{
		{"no-such-level", flowv1.ReasonNativeLevelNotFound, false},
		{"apf-tenant", flowv1.ReasonNativeLevelOwned, false},
		{"apf-ghost", flowv1.ReasonNativeLevelOwned, false},
		{"exempt", flowv1.ReasonExemptBindingNotAllowed, false},
		{"exempt", flowv1.ReasonBound, true},
	} {
		t.Run(c.target+"/"+c.reason, func(t *testing.T) {
			e := existing
			if c.mayExempt {
				e.MayBindExempt = func(name string) bool { return name == "bound" }
			}
			plan := native.Project(effective.Compute([]flowv1.RequestPriority{boundRP("bound", 100, c.target)},
				[]flowv1.FlowSchema{toLevel("to-bound", "bound")}), e)
			res := plan.RequestPriorities["bound"]
			if res.Reason != c.reason || res.Projected != (c.reason == flowv1.ReasonBound) {
				t.Fatalf("RequestPriority: %+v, want reason %s", res, c.reason)
			}
			fsRes := plan.FlowSchemaResults["to-bound"]
			if c.reason == flowv1.ReasonBound {
				if got := schemaLevel(t, plan, "apf-to-bound"); got != c.target {
					t.Errorf("FlowSchema projected onto %s, want %s", got, c.target)
				}
				return
			}
			if fsRes.Projected || fsRes.Reason != flowv1.ReasonRequestPriorityNotProjected || !strings.Contains(fsRes.Message, c.reason) {
				t.Errorf("FlowSchema: %+v, want RequestPriorityNotProjected naming %s", fsRes, c.reason)
			}
			if len(plan.PriorityLevels) != 0 || len(plan.FlowSchemas) != 0 {
				t.Errorf("the plan writes %d levels and %d FlowSchemas for a refused binding, want none",
					len(plan.PriorityLevels), len(plan.FlowSchemas))
			}
		})
	}
}

// TestProjectedLevelNamesItsDifferences: an unbound level's message names lendablePercent only
// when the spec leaves it out (natively 0, in-process lend everything).
func TestProjectedLevelNamesItsDifferences(t *testing.T) {
	absent, given := withShares(requestPriority("absent", 100, 1, 0), 5), withShares(requestPriority("given", 200, 1, 0), 5)
	given.Spec.LendablePercent = ptr.To[int32](0)
	plan := native.Project(effective.Compute([]flowv1.RequestPriority{absent, given}, nil), native.Existing{})
	if msg := plan.RequestPriorities["absent"].Message; !strings.Contains(msg, "spec.lendablePercent: in-process is absent") {
		t.Errorf("absent lendablePercent not reported: %s", msg)
	}
	msg := plan.RequestPriorities["given"].Message
	if strings.Contains(msg, "spec.lendablePercent") {
		t.Errorf("a given lendablePercent is reported as differing: %s", msg)
	}
	for _, want := range []string{"spec.priorityLevel", "request width", "spec.queuesPerWidth"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
}
