package effective

import (
	"strings"
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// mastersTest is the atomic test "the request's groups include system:masters".
var mastersTest = flowv1.AtomicTest{SuperSet: &flowv1.SetTest{Field: flowv1.FieldGroups, Set: []string{MastersGroup}}}

func matching(f flowv1.FlowSchema, cjs ...flowv1.Conjunction) flowv1.FlowSchema {
	f.Spec.Match = cjs
	return f
}

func and(tests ...flowv1.AtomicTest) flowv1.Conjunction { return flowv1.Conjunction{And: tests} }

// TestMastersSchemaAheadOfEverySchema: whatever the FlowSchemas, the implicit schema for
// system:masters targets the level-0 RequestPriority in effect, and a FlowSchema that could
// only take system:masters requests to a queued level is reported as overridden.
func TestMastersSchemaAheadOfEverySchema(t *testing.T) {
	user := flowv1.AtomicTest{Equals: &flowv1.ValueTest{Field: flowv1.FieldUser, Value: "alice"}}
	schemas := fss(
		fs("grab-all", "one-seat", 0),
		matching(fs("masters-queued", "one-seat", 0), and(mastersTest), and(mastersTest, user)),
		matching(fs("masters-or-alice", "one-seat", 1), and(mastersTest), and(user)),
		matching(fs("masters-exempt", "admins", 2), and(mastersTest)),
	)
	for _, tc := range []struct {
		name      string
		rps       []flowv1.RequestPriority
		wantLevel string
	}{
		{"actual level 0", rps(rp("one-seat", 100, 1, 1), rp("admins", 0, 0, 2)), "admins"},
		{"backstop level 0", rps(rp("one-seat", 100, 1, 1)), BackstopExemptName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compute(tc.rps, schemas)
			if m := c.MastersBackstop; m.Name != BackstopExemptName || m.Priority.Name != tc.wantLevel || !m.Priority.Exempt() {
				t.Errorf("implicit schema %s at %s (exempt %v), want %s at %s", m.Name, m.Priority.Name,
					m.Priority.Exempt(), BackstopExemptName, tc.wantLevel)
			}
			st := c.FlowSchemaStatus["masters-queued"]
			if st.InEffect || st.Reason != flowv1.ReasonOverriddenByMastersSchema ||
				!strings.Contains(st.Message, `the implicit FlowSchema "system-top" sends to the exempt level ahead of every FlowSchema`) {
				t.Errorf("masters-queued status = %+v, want not in effect, %s", st, flowv1.ReasonOverriddenByMastersSchema)
			}
			for _, name := range []string{"grab-all", "masters-or-alice"} {
				if st := c.FlowSchemaStatus[name]; !st.InEffect {
					t.Errorf("%s status = %+v, want in effect", name, st)
				}
			}
			for _, s := range c.Schemas {
				if s.Name == "masters-queued" {
					t.Errorf("the overridden schema is in effect")
				}
			}
		})
	}
	// masters-exempt refers to the actual level 0 and stays in effect; without one its
	// reference is not found, which has nothing to do with the override.
	if st := Compute(rps(rp("one-seat", 100, 1, 1), rp("admins", 0, 0, 2)), schemas).FlowSchemaStatus["masters-exempt"]; !st.InEffect {
		t.Errorf("a masters-only schema at the exempt level: status %+v, want in effect", st)
	}
}
