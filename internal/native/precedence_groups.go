package native

import (
	"fmt"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// span is a run [start, end) of the ordered FlowSchemas that share one native precedence.
type span struct{ start, end int }

// precedenceGroups splits the ordered FlowSchemas (in (matchingPriority, name) order, with
// their matching priorities) into the runs that can share one native precedence.
// kube-apiserver breaks precedence ties by name, so a run may hold FlowSchemas of one matching
// priority whose native names increase in our order. "apf-<name>" sorts as "<name>" does, so a
// run is normally a whole matching priority; a name cut and hashed by bounded (longer than 249
// characters) may sort differently, and then starts a new run at a higher precedence.
func precedenceGroups(ordered []*flowcontrolv1.FlowSchema, matchingPriorities []int32) []span {
	var groups []span
	for i := range ordered {
		if i > 0 && matchingPriorities[i] == matchingPriorities[i-1] && ordered[i-1].Name < ordered[i].Name {
			groups[len(groups)-1].end = i + 1
			continue
		}
		groups = append(groups, span{start: i, end: i + 1})
	}
	return groups
}

// placeSchemas gives each run of precedenceGroups one precedence (kept from the existing
// native objects where possible, see assignPrecedences) and adds its FlowSchemas to the plan;
// the runs past the end of the range report PrecedenceExhausted.
func (pr *projector) placeSchemas(ordered []*flowcontrolv1.FlowSchema, sources []string, matchingPriorities []int32) {
	groups := precedenceGroups(ordered, matchingPriorities)
	previous := make([]int32, len(groups))
	for g, run := range groups {
		previous[g] = pr.previousPrecedence(ordered[run.start:run.end])
	}
	precedences := assignPrecedences(previous, pr.plan.FirstPrecedence, MaxPrecedence-1)
	for g, run := range groups {
		for i := run.start; i < run.end; i++ {
			if g >= len(precedences) {
				pr.plan.FlowSchemaResults[sources[i]] = exhausted(pr.plan.FirstPrecedence, len(precedences), g)
				continue
			}
			ordered[i].Spec.MatchingPrecedence = precedences[g]
			pr.plan.FlowSchemas = append(pr.plan.FlowSchemas, *ordered[i])
			pr.plan.FlowSchemaResults[sources[i]] = projected("FlowSchema", ordered[i].Name)
		}
	}
}

// previousPrecedence is the precedence most of a run's existing native FlowSchemas have (the
// earliest in order on a tie), counting only those whose precedence the operator wrote, or, for
// one not observed yet, the planned one; 0 when none has one. Taking the majority keeps a run's
// precedence when a FlowSchema joins or leaves it.
func (pr *projector) previousPrecedence(run []*flowcontrolv1.FlowSchema) int32 {
	counts := map[int32]int{}
	var best int32
	for _, fs := range run {
		p := pr.planned[fs.Name]
		if old := pr.fss[fs.Name]; old != nil {
			p = 0
			if Owned(old) && ownsPrecedence(old) {
				p = old.Spec.MatchingPrecedence
			}
		}
		if p == 0 {
			continue
		}
		counts[p]++
		if best == 0 || counts[p] > counts[best] {
			best = p
		}
	}
	return best
}

// exhausted is the Result of a FlowSchema of the run at index run (0-based) when only fit
// runs get a precedence from first on.
func exhausted(first int32, fit, run int) Result {
	msg := fmt.Sprintf("not projected: only %d distinct matching priorities fit between matching precedences %d and %d, "+
		"and %d are in effect before this one's", fit, first, MaxPrecedence-1, run)
	if first > MinPrecedence {
		msg += fmt.Sprintf(" (the projection starts at %d, after the cluster's own FlowSchemas before %d, "+
			"which it keeps ahead of its own)", first, TailPrecedence)
	}
	return Result{Reason: flowv1.ReasonPrecedenceExhausted, Message: msg}
}
