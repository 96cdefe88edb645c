package webhooks

import (
	"context"
	"strings"
	"testing"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// TestOverlapWarned: a FlowSchema whose match intersects a stored one's at the same
// matchingPriority is admitted with a warning naming both and the fix; at another
// matchingPriority, or with a disjoint match, it is admitted without one.
func TestOverlapWarned(t *testing.T) {
	s := envSuite(t)
	ctx := context.Background()
	c, warnings := s.clientAs(t, "", nil)
	rp := queuedRP("it-overlap", 5977, 64, 6)
	if err := c.Create(ctx, rp); err != nil {
		t.Fatal(err)
	}
	s.waitCached(t, rp)
	users := func(name string, priority int32, us ...string) *v1alpha1.FlowSchema {
		fs := flowSchema(name, rp.Name, nil)
		fs.Spec.MatchingPriority = priority
		fs.Spec.Match = []v1alpha1.Conjunction{{And: []v1alpha1.AtomicTest{
			{InSet: &v1alpha1.SetTest{Field: v1alpha1.FieldUser, Set: us}}}}}
		return fs
	}
	stored := users("it-overlap-b", 700123, "overlap-user")
	if err := c.Create(ctx, stored); err != nil {
		t.Fatal(err)
	}
	s.waitCached(t, stored)
	warnings.take()
	for _, tc := range []struct {
		fs   *v1alpha1.FlowSchema
		warn bool
	}{
		{users("it-overlap-a", 700123, "overlap-user", "someone-else"), true},
		{users("it-overlap-c", 700124, "overlap-user"), false},
		{users("it-overlap-d", 700123, "third-user"), false},
	} {
		if err := c.Create(ctx, tc.fs); err != nil {
			t.Fatalf("creating %s: %v", tc.fs.Name, err)
		}
		got := warnings.take()
		if !tc.warn {
			if len(got) != 0 {
				t.Errorf("%s: warnings %q; want none", tc.fs.Name, got)
			}
			continue
		}
		if len(got) != 1 || !strings.Contains(got[0], `FlowSchemas "it-overlap-a" and "it-overlap-b" have the same spec.matchingPriority 700123`) ||
			!strings.Contains(got[0], "give one of them a different matchingPriority") {
			t.Errorf("%s: warnings %q; want one naming both and the fix", tc.fs.Name, got)
		}
	}
}
