package native_test

import (
	"strings"
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/apitest"
	"github.com/apf-operator/apf-operator/internal/native"
)

// longName is a valid object name of 253 characters ending with suffix.
func longName(suffix string) string { return strings.Repeat("a", 253-len(suffix)) + suffix }

func TestNativeNamesAreCutWithALongHash(t *testing.T) {
	a, b := native.NativeName(longName("x")), native.NativeName(longName("y"))
	switch {
	case len(a) != 253 || len(b) != 253:
		t.Fatalf("lengths %d and %d, want 253", len(a), len(b))
	case a == b:
		t.Fatalf("two names, one native name %s", a)
	case a[236] != '-' || strings.Trim(a[237:], "0123456789abcdef") != "":
		t.Fatalf("%s does not end with '-' and 16 hex digits", a[230:])
	case native.NativeName("short") != "apf-short":
		t.Fatalf("a short name is cut: %s", native.NativeName("short"))
	}
}

// TestNameCollision forces two long names onto one native name: the first by name keeps it,
// the other reports NameConflict naming it, for RequestPriorities and for FlowSchemas.
func TestNameCollision(t *testing.T) {
	defer native.SetNameHash(func(string) string { return "0123456789abcdef" })()
	rpA, rpB, fsA, fsB := longName("rp-a"), longName("rp-b"), longName("fs-a"), longName("fs-b")
	if native.NativeName(rpA) != native.NativeName(rpB) || native.NativeName(fsA) != native.NativeName(fsB) {
		t.Fatal("the forced hash does not make the names collide")
	}
	rps := []flowv1.RequestPriority{requestPriority(rpB, 10, 64, 6), requestPriority(rpA, 20, 64, 6),
		requestPriority("rp", 30, 64, 6)}
	all := apitest.And()
	fss := []flowv1.FlowSchema{flowSchema(fsB, 1, "rp", nil, all), flowSchema(fsA, 2, "rp", nil, all)}
	cfg := effective.Compute(rps, fss)
	plan := native.Project(cfg, native.Existing{})
	for _, c := range []struct {
		results       map[string]native.Result
		winner, loser string
	}{{plan.RequestPriorities, rpA, rpB}, {plan.FlowSchemaResults, fsA, fsB}} {
		win, lose := c.results[c.winner], c.results[c.loser]
		if !win.Projected {
			t.Errorf("%s...: %+v, want Projected", c.winner[240:], win)
		}
		if lose.Projected || lose.Reason != flowv1.ReasonNameConflict || !strings.Contains(lose.Message, c.winner) ||
			!strings.Contains(lose.Message, "rename") {
			t.Errorf("%s...: %+v, want NameConflict naming %s and the fix", c.loser[240:], lose, c.winner)
		}
	}
	names := map[string]bool{}
	for _, o := range plan.PriorityLevels {
		if names["plc/"+o.Name] {
			t.Fatalf("two native levels named %s", o.Name)
		}
		names["plc/"+o.Name] = true
	}
	for _, o := range plan.FlowSchemas {
		if names["fs/"+o.Name] {
			t.Fatalf("two native FlowSchemas named %s", o.Name)
		}
		names["fs/"+o.Name] = true
	}
	if len(plan.PriorityLevels) != 2 { // rpA and rp
		t.Fatalf("%d native levels, want 2: %v", len(plan.PriorityLevels), names)
	}
}
