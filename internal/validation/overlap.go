package validation

import (
	"context"
	"fmt"
	"sort"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
)

// Intersector reports whether some request can match both FlowSchema specs' match, and false
// when none can or the analysis cannot prove one. native.Intersect is the exact one; it lives
// in package native (which imports this one), so callers pass it in.
type Intersector func(a, b *v1alpha1.FlowSchemaSpec) bool

// Overlap is two FlowSchemas at one matchingPriority whose matches accept a common request:
// kube-apiserver and the filter send that request to the first by name, a tie the author
// probably did not mean.
type Overlap struct {
	// First sorts before Second by name, so it takes their common requests.
	First, Second    string
	MatchingPriority int32
}

// Warning is the message a user sees, naming both objects and the fix.
func (o Overlap) Warning() string {
	return fmt.Sprintf("FlowSchemas %q and %q have the same spec.matchingPriority %d and both match some requests: "+
		"those go to %q only because its name sorts first; give one of them a different matchingPriority "+
		"(lower wins) to say which should take them", o.First, o.Second, o.MatchingPriority, o.First)
}

func (o Overlap) String() string { return o.Warning() }

// Overlaps lists every pair of schemas at one matchingPriority whose matches intersect, sorted
// by matchingPriority then names. Objects sharing a name are compared once (the first).
func Overlaps(schemas []*v1alpha1.FlowSchema, intersect Intersector) []Overlap {
	byPriority := map[int32][]*v1alpha1.FlowSchema{}
	seen := map[string]bool{}
	for _, fs := range schemas {
		if !seen[fs.Name] {
			seen[fs.Name] = true
			byPriority[fs.Spec.MatchingPriority] = append(byPriority[fs.Spec.MatchingPriority], fs)
		}
	}
	var out []Overlap
	for p, group := range byPriority {
		sort.Slice(group, func(i, j int) bool { return group[i].Name < group[j].Name })
		for i := range group {
			for j := i + 1; j < len(group); j++ {
				if intersect(&group[i].Spec, &group[j].Spec) {
					out = append(out, Overlap{First: group[i].Name, Second: group[j].Name, MatchingPriority: p})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].MatchingPriority != out[j].MatchingPriority {
			return out[i].MatchingPriority < out[j].MatchingPriority
		}
		if out[i].First != out[j].First {
			return out[i].First < out[j].First
		}
		return out[i].Second < out[j].Second
	})
	return out
}

// SamePriority is implemented by Objects that can list the FlowSchemas at one matchingPriority
// from an index (the webhook's cache, Set): the admission warning for overlaps reads that one
// index entry, never every FlowSchema.
type SamePriority interface {
	FlowSchemasAtMatchingPriority(ctx context.Context, matchingPriority int32) ([]*v1alpha1.FlowSchema, error)
}

// AdmissionOverlapPairs bounds the overlap analysis of one admission: the conjunction pairs
// (len(obj.match) x len(peer.match), summed over the peers) it may compare. A FlowSchema may
// hold 64 conjunctions and any number of FlowSchemas may share a matchingPriority, so without
// it the warning alone could take an admission past its timeout. BenchmarkIntersect measures
// about 10 µs a pair on the development machine.
const AdmissionOverlapPairs = 256

// OverlapWarnings returns the warnings for obj against the stored FlowSchemas at its
// matchingPriority (obj's own stored version skipped by name), comparing them all: the
// offline validator's check.
func OverlapWarnings(ctx context.Context, obj *v1alpha1.FlowSchema, others SamePriority, intersect Intersector) ([]string, error) {
	return OverlapWarningsWithin(ctx, obj, others, intersect, 0)
}

// OverlapWarningsWithin is OverlapWarnings comparing at most maxPairs conjunction pairs (0: no
// limit); the peers past the budget are not compared, and one warning says how many.
func OverlapWarningsWithin(ctx context.Context, obj *v1alpha1.FlowSchema, others SamePriority, intersect Intersector,
	maxPairs int) ([]string, error) {
	peers, err := others.FlowSchemasAtMatchingPriority(ctx, obj.Spec.MatchingPriority)
	if err != nil {
		return nil, err
	}
	var warnings []string
	pairs, unchecked := 0, 0
	for _, peer := range peers {
		if peer.Name == obj.Name {
			continue
		}
		cost := len(obj.Spec.Match) * len(peer.Spec.Match)
		if maxPairs > 0 && pairs+cost > maxPairs {
			unchecked++
			continue
		}
		pairs += cost
		if !intersect(&obj.Spec, &peer.Spec) {
			continue
		}
		o := Overlap{First: obj.Name, Second: peer.Name, MatchingPriority: obj.Spec.MatchingPriority}
		if peer.Name < obj.Name {
			o.First, o.Second = peer.Name, obj.Name
		}
		warnings = append(warnings, o.Warning())
	}
	sort.Strings(warnings)
	if unchecked > 0 {
		warnings = append(warnings, fmt.Sprintf("%d other FlowSchema(s) at spec.matchingPriority %d were not checked for "+
			"overlapping matches (admission compares at most %d conjunction pairs); 'apf-operator validate' on the "+
			"manifests checks them all", unchecked, obj.Spec.MatchingPriority, maxPairs))
	}
	return warnings, nil
}
