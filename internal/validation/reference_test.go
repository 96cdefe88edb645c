package validation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

func TestFlowSchemaAgainstPriority(t *testing.T) {
	single := queued(2000)
	single.QueuesPerWidth, single.HandSize = ptr.To[int32](1), nil
	many := queued(1000)
	exempt := v1alpha1.RequestPrioritySpec{PriorityLevel: 0}
	withD := schema()
	withoutD := schema()
	withoutD.FlowDistinguisher = nil
	dPath := specPath.Child("flowDistinguisher")
	cases := []struct {
		name string
		fs   v1alpha1.FlowSchemaSpec
		rp   *v1alpha1.RequestPrioritySpec
		want field.ErrorList
	}{
		{"distinguisher with many queues", withD, &many, nil},
		{"no distinguisher at exempt level", withoutD, &exempt, nil},
		{"no distinguisher with one queue", withoutD, &single, nil},
		{"distinguisher at exempt level", withD, &exempt, field.ErrorList{field.Forbidden(dPath,
			`RequestPriority "system-high" has the exempt priorityLevel 0, whose requests are never queued; remove flowDistinguisher`)}},
		{"distinguisher with one queue", withD, &single, field.ErrorList{field.Forbidden(dPath,
			`RequestPriority "system-high" has queuesPerWidth 1, a single queue with no flows to tell apart; remove flowDistinguisher`)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs, warnings := FlowSchemaAgainstPriority(&c.fs, c.rp, specPath)
			matcher.Test(t, c.want, errs)
			if len(warnings) != 0 {
				t.Errorf("warnings = %q, want none", warnings)
			}
		})
	}
}

func TestFlowSchemaAgainstMissingPriorityWarns(t *testing.T) {
	fs := schema()
	errs, warnings := FlowSchemaAgainstPriority(&fs, nil, specPath)
	if len(errs) != 0 {
		t.Fatalf("errors = %v; a missing RequestPriority must not be an error (GitOps order)", errs)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], `spec.requestPriority.name: RequestPriority "system-high" not found`) {
		t.Fatalf("warnings = %q, want one naming the missing RequestPriority", warnings)
	}
}

func TestFlowSchemaOverriddenByMastersWarns(t *testing.T) {
	fs := schema()
	fs.FlowDistinguisher = nil
	fs.Match = []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{
		{SuperSet: &v1alpha1.SetTest{Field: v1alpha1.FieldGroups, Set: []string{MastersGroup}}}}}}
	queuedLevel, exempt := queued(1000), v1alpha1.RequestPrioritySpec{PriorityLevel: 0}
	_, warnings := FlowSchemaAgainstPriority(&fs, &queuedLevel, specPath)
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0],
		`spec.match: every request this FlowSchema matches is of group system:masters, which the implicit FlowSchema "system-top"`) {
		t.Errorf("queued level: warnings = %q, want one about the implicit system-top", warnings)
	}
	if _, warnings := FlowSchemaAgainstPriority(&fs, &exempt, specPath); len(warnings) != 0 {
		t.Errorf("exempt level: warnings = %q, want none (the implicit schema sends them there too)", warnings)
	}
}
