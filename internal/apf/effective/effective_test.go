package effective

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// rp returns a valid RequestPriority created at epoch+age seconds; level 0 takes no shares.
func rp(name string, level, shares int32, age int) flowv1.RequestPriority {
	o := flowv1.RequestPriority{ObjectMeta: metav1.ObjectMeta{Name: name,
		CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(age) * time.Second))},
		Spec: flowv1.RequestPrioritySpec{PriorityLevel: level}}
	if level != 0 {
		o.Spec.AssuredConcurrencyShares = ptr(shares)
		o.Spec.QueuesPerWidth = ptr(64)
		o.Spec.HandSize = ptr(6)
		o.Spec.QueueLengthLimit = ptr(50)
	}
	return o
}

func fs(name, target string, matching int32) flowv1.FlowSchema {
	return flowv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowv1.FlowSchemaSpec{
		MatchingPriority: matching, RequestPriority: flowv1.RequestPriorityReference{Name: target},
		Match: []flowv1.Conjunction{{And: []flowv1.AtomicTest{}}}}}
}

func withUser(f flowv1.FlowSchema) flowv1.FlowSchema {
	f.Spec.FlowDistinguisher = &flowv1.FlowDistinguisher{Source: flowv1.SourceUser}
	return f
}

func rps(items ...flowv1.RequestPriority) []flowv1.RequestPriority { return items }
func fss(items ...flowv1.FlowSchema) []flowv1.FlowSchema           { return items }

// level is a compact view of an effective Priority.
type level struct {
	name     string
	level    int32
	backstop bool
}

func levels(c *Config) []level {
	var out []level
	for _, p := range c.Priorities {
		out = append(out, level{p.Name, p.Level, p.Backstop})
	}
	return out
}

func TestBackstopPriorities(t *testing.T) {
	cases := []struct {
		name     string
		rps      []flowv1.RequestPriority
		want     []level
		catchAll string
	}{
		{"no objects: both backstops", nil,
			[]level{{"system-top", 0, true}, {"workload-low", 10000, true}}, "workload-low"},
		{"only level 0: workload-low backstop appears", rps(rp("admins", 0, 0, 0)),
			[]level{{"admins", 0, false}, {"workload-low", 10000, true}}, "workload-low"},
		{"only non-zero levels: system-top backstop appears", rps(rp("a", 50, 1, 0), rp("b", 20, 1, 0)),
			[]level{{"system-top", 0, true}, {"b", 20, false}, {"a", 50, false}}, "a"},
		{"both kinds: no backstop", rps(rp("top", 0, 0, 0), rp("low", 7, 1, 0)),
			[]level{{"top", 0, false}, {"low", 7, false}}, "low"},
		{"an invalid level-0 object is ignored: system-top backstop stays",
			rps(func() flowv1.RequestPriority {
				o := rp("bad", 0, 0, 0)
				o.Spec.QueuesPerWidth = ptr(2)
				return o
			}(), rp("low", 7, 1, 0)),
			[]level{{"system-top", 0, true}, {"low", 7, false}}, "low"},
		{"a duplicate of the only non-zero level does not hide it", rps(rp("x", 5, 1, 1), rp("y", 5, 1, 2)),
			[]level{{"system-top", 0, true}, {"x", 5, false}}, "x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Compute(tc.rps, nil)
			if got := levels(c); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("levels = %v, want %v", got, tc.want)
			}
			if c.CatchAll.Name != CatchAllName || c.CatchAll.Priority.Name != tc.catchAll ||
				c.CatchAll.Distinguisher == nil || c.CatchAll.Distinguisher.Source != flowv1.SourceUser {
				t.Errorf("catch-all = %+v at %s, want %s at %s with user distinguisher", c.CatchAll, c.CatchAll.Priority.Name, CatchAllName, tc.catchAll)
			}
			if !c.MastersBackstop.Priority.Exempt() || c.MastersBackstop.Name != BackstopExemptName {
				t.Errorf("masters backstop at %+v", c.MastersBackstop.Priority)
			}
		})
	}
}

func TestDuplicateLevels(t *testing.T) {
	cases := []struct {
		name          string
		rps           []flowv1.RequestPriority
		winner, loser string
	}{
		{"older creationTimestamp wins even with a later name", rps(rp("zeta", 5, 1, 1), rp("alpha", 5, 1, 2)), "zeta", "alpha"},
		{"input order does not matter", rps(rp("alpha", 5, 1, 2), rp("zeta", 5, 1, 1)), "zeta", "alpha"},
		{"same creationTimestamp: name decides", rps(rp("b", 5, 1, 3), rp("a", 5, 1, 3)), "a", "b"},
		{"duplicate exempt level", rps(rp("new-top", 0, 0, 9), rp("old-top", 0, 0, 1)), "old-top", "new-top"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Compute(tc.rps, fss(fs("to-loser", tc.loser, 1)))
			if st := c.RequestPriorityStatus[tc.winner]; !st.InEffect || st.Reason != flowv1.ReasonAccepted {
				t.Errorf("winner %s: %+v", tc.winner, st)
			}
			st := c.RequestPriorityStatus[tc.loser]
			if st.InEffect || st.Reason != flowv1.ReasonDuplicatePriorityLevel || st.AssuredFraction != "" {
				t.Errorf("loser %s: %+v", tc.loser, st)
			}
			if st.FlowSchemas != 1 {
				t.Errorf("loser %s counts %d FlowSchemas, want 1", tc.loser, st.FlowSchemas)
			}
			for _, p := range c.Priorities {
				if p.Name == tc.loser {
					t.Errorf("loser %s is an effective level", tc.loser)
				}
			}
			if fst := c.FlowSchemaStatus["to-loser"]; fst.InEffect || fst.Reason != flowv1.ReasonRequestPriorityNotInEffect {
				t.Errorf("FlowSchema naming the loser: %+v", fst)
			}
		})
	}
}

func TestFlowSchemaResolution(t *testing.T) {
	cases := []struct {
		name     string
		rps      []flowv1.RequestPriority
		fs       flowv1.FlowSchema
		reason   string
		resolves string // effective level name when in effect
	}{
		{"actual object", rps(rp("mid", 5, 1, 0)), fs("f", "mid", 1), flowv1.ReasonAccepted, "mid"},
		{"dangling reference", rps(rp("mid", 5, 1, 0)), fs("f", "gone", 1), flowv1.ReasonRequestPriorityNotFound, ""},
		{"backstop workload-low while no non-zero level exists", rps(rp("top", 0, 0, 0)), fs("f", "workload-low", 1),
			flowv1.ReasonAccepted, "workload-low"},
		{"workload-low is no backstop once a non-zero level exists", rps(rp("mid", 5, 1, 0)), fs("f", "workload-low", 1),
			flowv1.ReasonRequestPriorityNotFound, ""},
		{"backstop system-top while no level 0 exists", rps(rp("mid", 5, 1, 0)), fs("f", "system-top", 1),
			flowv1.ReasonAccepted, "system-top"},
		{"system-top is no backstop once level 0 exists", rps(rp("admins", 0, 0, 0)), fs("f", "system-top", 1),
			flowv1.ReasonRequestPriorityNotFound, ""},
		{"invalid RequestPriority: not in effect", rps(func() flowv1.RequestPriority {
			o := rp("broken", 5, 1, 0)
			o.Spec.HandSize = ptr(65)
			return o
		}()), fs("f", "broken", 1), flowv1.ReasonRequestPriorityNotInEffect, ""},
		{"distinguisher at the exempt level", rps(rp("top", 0, 0, 0)), withUser(fs("f", "top", 1)), flowv1.ReasonInvalidSpec, ""},
		{"distinguisher at a one-queue level", rps(func() flowv1.RequestPriority {
			o := rp("fifo", 5, 1, 0)
			o.Spec.QueuesPerWidth, o.Spec.HandSize = ptr(1), nil
			return o
		}()), withUser(fs("f", "fifo", 1)), flowv1.ReasonInvalidSpec, ""},
		{"distinguisher at backstop workload-low", nil, withUser(fs("f", "workload-low", 1)), flowv1.ReasonAccepted, "workload-low"},
		{"invalid FlowSchema spec", rps(rp("mid", 5, 1, 0)), func() flowv1.FlowSchema {
			f := fs("f", "mid", 1)
			f.Spec.Match[0].And = []flowv1.AtomicTest{{}}
			return f
		}(), flowv1.ReasonInvalidSpec, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Compute(tc.rps, fss(tc.fs))
			st := c.FlowSchemaStatus[tc.fs.Name]
			if st.Reason != tc.reason || st.InEffect != (tc.resolves != "") || st.Message == "" {
				t.Fatalf("status = %+v, want reason %s", st, tc.reason)
			}
			if tc.resolves == "" {
				if len(c.Schemas) != 0 {
					t.Errorf("a FlowSchema not in effect is in Schemas: %+v", c.Schemas[0])
				}
				return
			}
			if len(c.Schemas) != 1 || c.Schemas[0].Priority.Name != tc.resolves {
				t.Errorf("Schemas = %+v, want one at %s", c.Schemas, tc.resolves)
			}
		})
	}
}

func TestSchemasOrderAndCounts(t *testing.T) {
	c := Compute(rps(rp("top", 0, 0, 0), rp("mid", 5, 1, 0)),
		fss(fs("b", "mid", 10), fs("a", "mid", 10), fs("c", "top", 1), fs("d", "gone", 0)))
	var order []string
	for _, s := range c.Schemas {
		order = append(order, s.Name)
	}
	if want := []string{"c", "a", "b"}; !reflect.DeepEqual(order, want) {
		t.Errorf("schema order = %v, want %v", order, want)
	}
	if n := c.RequestPriorityStatus["mid"].FlowSchemas; n != 2 {
		t.Errorf("mid counts %d FlowSchemas, want 2", n)
	}
	if n := c.RequestPriorityStatus["top"].FlowSchemas; n != 1 {
		t.Errorf("top counts %d FlowSchemas, want 1", n)
	}
}

func TestAssuredFraction(t *testing.T) {
	c := Compute(rps(rp("top", 0, 0, 0), rp("a", 10, 10, 0), rp("b", 20, 30, 0), rp("dup", 20, 1000, 5), rp("idle", 30, 0, 0)), nil)
	want := map[string]string{"top": "", "a": "0.0714", "b": "0.2143", "dup": "", "idle": "0"}
	for name, frac := range want {
		if got := c.RequestPriorityStatus[name].AssuredFraction; got != frac {
			t.Errorf("%s: assured fraction %q, want %q (10/140 and 30/140; the duplicate's shares do not count)", name, got, frac)
		}
	}
	if c.TotalShares() != 40 {
		t.Errorf("TotalShares = %d, want 40", c.TotalShares())
	}
}

func TestAssuredFractionWithBackstop(t *testing.T) {
	// Only the exempt level is actual: backstop workload-low (10 shares) takes 10/110.
	c := Compute(rps(rp("top", 0, 0, 0)), nil)
	low := c.Priorities[len(c.Priorities)-1]
	if got := FormatFraction(c.AssuredFraction(low)); got != "0.0909" {
		t.Errorf("backstop fraction = %s, want 0.0909", got)
	}
	if _, reported := c.RequestPriorityStatus[low.Name]; reported {
		t.Error("a backstop has a status entry")
	}
}

func TestAssuredConcurrency(t *testing.T) {
	c := Compute(rps(rp("top", 0, 0, 0), rp("a", 10, 10, 0), rp("b", 20, 30, 0), rp("z", 30, 0, 0)), nil)
	byName := map[string]*Priority{}
	for _, p := range c.Priorities {
		byName[p.Name] = p
	}
	cases := []struct {
		name string
		scl  int
		want int
	}{
		{"a", 600, 43},  // ceil(600*10/140) = ceil(42.86)
		{"b", 600, 129}, // ceil(600*30/140) = ceil(128.57)
		{"a", 140, 10},  // exact: no rounding up
		{"a", 1, 1},     // ceil(10/140)
		{"z", 600, 0},   // no shares, no assurance
		{"top", 600, 0}, // exempt
		{"a", 0, 0},
	}
	for _, tc := range cases {
		if got := c.AssuredConcurrency(byName[tc.name], tc.scl); got != tc.want {
			t.Errorf("ACV(%s, SCL=%d) = %d, want %d", tc.name, tc.scl, got, tc.want)
		}
	}
}

func TestFormatFraction(t *testing.T) {
	for f, want := range map[float64]string{0: "0", 0.5: "0.5", 1.0 / 3: "0.3333", 1: "1", 0.07142857: "0.0714", 0.99999: "1"} {
		if got := FormatFraction(f); got != want {
			t.Errorf("FormatFraction(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestComputeLeavesInputsAlone(t *testing.T) {
	in := rps(rp("b", 5, 1, 2), rp("a", 5, 1, 1), rp("top", 0, 0, 0))
	fin := fss(fs("y", "a", 2), fs("x", "b", 1))
	before := []any{in[0].DeepCopy(), in[1].DeepCopy(), in[2].DeepCopy(), fin[0].DeepCopy(), fin[1].DeepCopy()}
	Compute(in, fin)
	after := []any{in[0].DeepCopy(), in[1].DeepCopy(), in[2].DeepCopy(), fin[0].DeepCopy(), fin[1].DeepCopy()}
	if !reflect.DeepEqual(before, after) {
		t.Error("Compute modified its arguments")
	}
}
