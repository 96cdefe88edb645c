package native_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native"
)

// This file checks that FlowSchemas of one matching priority sharing one native precedence keep
// our order in kube-apiserver's (precedence, name) order, names cut and hashed included, and that
// adding or removing a FlowSchema moves no other FlowSchema's precedence.

// userSchema is a projectable FlowSchema matching one user.
func userSchema(name string, matchingPriority int32) flowv1.FlowSchema {
	return flowSchema(name, matchingPriority, "rp", nil, flowv1.Conjunction{And: []flowv1.AtomicTest{
		{Equals: &flowv1.ValueTest{Field: flowv1.FieldUser, Value: "u-" + name}}}})
}

// longPrefix is 240 characters: names starting with it and longer than 249 are cut and hashed.
var longPrefix = strings.Repeat("x", 239) + "."

// randomName is a short name, or (one in three) a long one sharing longPrefix, so that cut
// names tie with each other and with uncut ones on their first 240 characters.
func randomName(r *rand.Rand) string {
	if r.IntN(3) > 0 {
		return fmt.Sprintf("fs-%03d", r.IntN(1000))
	}
	return longPrefix + strings.Repeat(string(rune('a'+r.IntN(3))), 1+r.IntN(13))
}

// randomTies is up to 30 FlowSchemas of distinct names over at most 3 matching priorities.
func randomTies(r *rand.Rand) []flowv1.FlowSchema {
	var fss []flowv1.FlowSchema
	seen := map[string]bool{}
	for range 1 + r.IntN(30) {
		if name := randomName(r); !seen[name] {
			seen[name] = true
			fss = append(fss, userSchema(name, int32(r.IntN(3))))
		}
	}
	return fss
}

// projectedOrder lists the native names of the projected FlowSchemas in kube-apiserver's
// order (precedence, name), without its mandatory exempt FlowSchema and our backstop.
func projectedOrder(plan *native.Plan) []string {
	var out []string
	for _, fs := range nativeOrder(plan) {
		if strings.HasPrefix(fs.Name, "apf-") {
			out = append(out, fs.Name)
		}
	}
	return out
}

// ourOrder lists the native names of the effective configuration's FlowSchemas in our order.
func ourOrder(cfg *effective.Config) []string {
	out := make([]string, len(cfg.Schemas))
	for i, s := range cfg.Schemas {
		out[i] = native.NativeName(s.Name)
	}
	return out
}

func precedences(plan *native.Plan) map[string]int32 {
	out := map[string]int32{}
	for _, fs := range plan.FlowSchemas {
		out[fs.Name] = fs.Spec.MatchingPrecedence
	}
	return out
}

// TestPrecedenceOrderEquivalence projects random configurations with many ties, from scratch
// and onto the previous plan: every FlowSchema is projected and kube-apiserver's order is ours.
func TestPrecedenceOrderEquivalence(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	rps := []flowv1.RequestPriority{requestPriority("rp", 10, 8, 4)}
	previous := native.Existing{}
	shared, cut := 0, 0
	for range 2000 {
		cfg := effective.Compute(rps, randomTies(r))
		for _, existing := range []native.Existing{{}, previous} {
			plan := native.Project(cfg, existing)
			if got, want := projectedOrder(plan), ourOrder(cfg); !slices.Equal(got, want) {
				t.Fatalf("kube-apiserver's order differs from ours:\n got %v\nwant %v\nprecedences %v", got, want, precedences(plan))
			}
			p := precedences(plan)
			for i := 1; i < len(cfg.Schemas); i++ {
				if p[native.NativeName(cfg.Schemas[i].Name)] == p[native.NativeName(cfg.Schemas[i-1].Name)] {
					shared++
					if len(cfg.Schemas[i].Name) > 249 || len(cfg.Schemas[i-1].Name) > 249 {
						cut++
					}
				}
			}
			previous = native.Existing{FlowSchemas: plan.FlowSchemas}
		}
	}
	if shared == 0 || cut == 0 {
		t.Errorf("%d neighbours shared a precedence, %d of them with a cut name: the generator misses ties", shared, cut)
	}
}

// TestPrecedenceStableUnderChange adds and removes random FlowSchemas, one at a time, each
// projection onto the previous plan: FlowSchemas of one matching priority share one precedence,
// and no other FlowSchema's precedence changes, unless a new matching priority falls between
// two whose precedences are adjacent (then assignPrecedences must move one).
func TestPrecedenceStableUnderChange(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 1))
	rps := []flowv1.RequestPriority{requestPriority("rp", 10, 8, 4)}
	var fss []flowv1.FlowSchema
	plan := native.Project(effective.Compute(rps, nil), native.Existing{})
	byPriority := map[int32]int32{} // precedence of each matching priority in the last plan
	joined, newPriorities := 0, 0
	for step := range 1500 {
		var changed flowv1.FlowSchema
		if len(fss) > 0 && r.IntN(3) == 0 {
			i := r.IntN(len(fss))
			changed = fss[i]
			fss = slices.Delete(fss, i, i+1)
		} else {
			changed = userSchema(fmt.Sprintf("fs-%05d", r.IntN(100000)), int32(r.IntN(300)))
			if slices.ContainsFunc(fss, func(fs flowv1.FlowSchema) bool { return fs.Name == changed.Name }) {
				continue
			}
			fss = append(fss, changed)
			if _, ok := byPriority[changed.Spec.MatchingPriority]; ok {
				joined++
			} else if !hasRoom(byPriority, changed.Spec.MatchingPriority) {
				plan = native.Project(effective.Compute(rps, fss), native.Existing{FlowSchemas: plan.FlowSchemas})
				byPriority = checkShared(t, step, effective.Compute(rps, fss), precedences(plan))
				continue
			} else {
				newPriorities++
			}
		}
		before := precedences(plan)
		cfg := effective.Compute(rps, fss)
		plan = native.Project(cfg, native.Existing{FlowSchemas: plan.FlowSchemas})
		after := precedences(plan)
		for _, s := range cfg.Schemas {
			if name := native.NativeName(s.Name); s.Name != changed.Name && before[name] != after[name] {
				t.Fatalf("step %d (%s at %d): %s moved from %d to %d", step, changed.Name, changed.Spec.MatchingPriority,
					s.Name, before[name], after[name])
			}
		}
		byPriority = checkShared(t, step, cfg, after)
	}
	if joined < 300 || newPriorities < 50 {
		t.Errorf("%d additions to an existing matching priority, %d of a new one with room: too few", joined, newPriorities)
	}
}

// hasRoom reports whether a new matching priority fits between its neighbours' precedences.
func hasRoom(byPriority map[int32]int32, mp int32) bool {
	below, above := int32(native.MinPrecedence-1), int32(native.MaxPrecedence)
	for q, p := range byPriority {
		if q < mp {
			below = max(below, p)
		} else {
			above = min(above, p)
		}
	}
	return above-below >= 2
}

// checkShared asserts that the FlowSchemas of each matching priority share one precedence, and
// returns it by matching priority.
func checkShared(t *testing.T, step int, cfg *effective.Config, after map[string]int32) map[int32]int32 {
	t.Helper()
	byPriority := map[int32]int32{}
	for _, s := range cfg.Schemas {
		p := after[native.NativeName(s.Name)]
		if q, ok := byPriority[s.MatchingPriority]; ok && q != p {
			t.Fatalf("step %d: matching priority %d at precedences %d and %d", step, s.MatchingPriority, q, p)
		}
		byPriority[s.MatchingPriority] = p
	}
	return byPriority
}

// TestPrecedenceCapacity: 10,000 FlowSchemas over 97 matching priorities are all projected;
// one distinct matching priority more than precedences fit is not.
func TestPrecedenceCapacity(t *testing.T) {
	rps := []flowv1.RequestPriority{requestPriority("rp", 10, 8, 4)}
	var fss []flowv1.FlowSchema
	for i := range 10000 {
		fss = append(fss, userSchema(fmt.Sprintf("svc-%05d", i), int32(i%97)))
	}
	plan := native.Project(effective.Compute(rps, fss), native.Existing{Unmatched: native.UnmatchedOperator})
	if len(plan.FlowSchemas) != 10000+1 { // and the backstop
		t.Fatalf("%d native FlowSchemas, want 10,000 and the backstop", len(plan.FlowSchemas))
	}
	fit := native.MaxPrecedence - native.MinPrecedence
	fss = fss[:0]
	for i := range fit + 1 {
		fss = append(fss, userSchema(fmt.Sprintf("svc-%05d", i), int32(i)), userSchema(fmt.Sprintf("tie-%05d", i), int32(i)))
	}
	plan = native.Project(effective.Compute(rps, fss), native.Existing{Unmatched: native.UnmatchedOperator})
	for _, name := range []string{fmt.Sprintf("svc-%05d", fit), fmt.Sprintf("tie-%05d", fit)} {
		if res := plan.FlowSchemaResults[name]; res.Reason != flowv1.ReasonPrecedenceExhausted {
			t.Errorf("%s: %+v, want PrecedenceExhausted", name, res)
		}
	}
	if len(plan.FlowSchemas) != 2*fit+1 {
		t.Errorf("%d native FlowSchemas, want %d", len(plan.FlowSchemas), 2*fit+1)
	}
}

// TestPlannedPrecedencesKept: a plan computed before the previous plan's native FlowSchemas are
// observed keeps their planned precedences; an observed object the operator does not own the
// precedence of is not kept.
func TestPlannedPrecedencesKept(t *testing.T) {
	rps := []flowv1.RequestPriority{requestPriority("rp", 10, 8, 4)}
	fss := []flowv1.FlowSchema{userSchema("a", 10), userSchema("b", 30)}
	first := native.Project(effective.Compute(rps, fss), native.Existing{})
	planned := precedences(first)
	fss = append(fss, userSchema("c", 20), userSchema("d", 5), userSchema("e", 10))
	second := precedences(native.Project(effective.Compute(rps, fss), native.Existing{PlannedPrecedences: planned}))
	for _, name := range []string{"apf-a", "apf-b", "apf-e"} {
		want := planned[name]
		if name == "apf-e" {
			want = planned["apf-a"]
		}
		if second[name] != want {
			t.Errorf("%s at %d, want %d (planned: %v, now: %v)", name, second[name], want, planned, second)
		}
	}
	without := precedences(native.Project(effective.Compute(rps, fss), native.Existing{}))
	if without["apf-a"] == planned["apf-a"] {
		t.Fatalf("the check is vacuous: a fresh plan gives apf-a %d too", without["apf-a"])
	}
}
