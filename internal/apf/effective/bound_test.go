package effective

import (
	"testing"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

func boundRP(name string, level int32, nativeLevel string, mutate func(*flowv1.RequestPrioritySpec)) flowv1.RequestPriority {
	r := flowv1.RequestPriority{Spec: flowv1.RequestPrioritySpec{PriorityLevel: level, NativeLevel: nativeLevel}}
	r.Name = name
	if mutate != nil {
		mutate(&r.Spec)
	}
	return r
}

func priorityNamed(t *testing.T, c *Config, name string) *Priority {
	t.Helper()
	for _, p := range c.Priorities {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no level %q in effect: %v", name, c.RequestPriorityStatus[name])
	return nil
}

// TestBoundLevelTakesItsNativeLevelsValues: absent fields take the bootstrap level's values
// (workload-high: 40 shares, 128 queues, hand 6, queue length 50, lendable 50), or the v1
// defaults for a level outside the bootstrap set; given fields are kept.
func TestBoundLevelTakesItsNativeLevelsValues(t *testing.T) {
	queues := int32(1)
	c := Compute([]flowv1.RequestPriority{
		boundRP("high", 100, "workload-high", nil),
		boundRP("custom", 200, "team-a", nil),
		boundRP("given", 300, "workload-high", func(s *flowv1.RequestPrioritySpec) { s.QueuesPerWidth = &queues }),
	}, nil)
	for _, c := range []struct {
		got  *Priority
		want Priority
	}{
		{priorityNamed(t, c, "high"), Priority{Shares: 40, QueuesPerWidth: 128, HandSize: 6, QueueLengthLimit: 50, LendablePercent: 50}},
		{priorityNamed(t, c, "custom"), Priority{Shares: 30, QueuesPerWidth: 64, HandSize: 8, QueueLengthLimit: 50, LendablePercent: 0}},
		{priorityNamed(t, c, "given"), Priority{Shares: 40, QueuesPerWidth: 1, HandSize: 0, QueueLengthLimit: 50, LendablePercent: 50}},
	} {
		g := c.got
		if g.Shares != c.want.Shares || g.QueuesPerWidth != c.want.QueuesPerWidth || g.HandSize != c.want.HandSize ||
			g.QueueLengthLimit != c.want.QueueLengthLimit || g.LendablePercent != c.want.LendablePercent || g.LendableAbsent {
			t.Errorf("%s: got %+v, want the fields of %+v", g.Name, *g, c.want)
		}
		if g.NativeLevel == "" {
			t.Errorf("%s: NativeLevel not carried", g.Name)
		}
	}
	if f := BoundDefaults("workload-high"); f.Source != SourceBootstrap {
		t.Errorf("workload-high: source %q, want bootstrap", f.Source)
	}
	if f := BoundDefaults("team-a"); f.Source != SourceAPIDefaults {
		t.Errorf("team-a: source %q, want v1 defaults", f.Source)
	}
}

// TestBindingChangesTheDigest: an unbound configuration keeps its digest; binding changes it.
func TestBindingChangesTheDigest(t *testing.T) {
	full := boundRP("high", 100, "", func(s *flowv1.RequestPrioritySpec) {
		v := func(x int32) *int32 { return &x }
		s.AssuredConcurrencyShares, s.QueuesPerWidth, s.HandSize, s.QueueLengthLimit = v(40), v(128), v(6), v(50)
		s.LendablePercent = v(50)
	})
	bound := full
	bound.Spec.NativeLevel = "workload-high"
	if digestOf([]flowv1.RequestPriority{full}, nil) == digestOf([]flowv1.RequestPriority{bound}, nil) {
		t.Error("binding a level leaves the digest unchanged")
	}
}
