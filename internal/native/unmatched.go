package native

import (
	"fmt"
)

// Unmatched says what classifies the requests that no projected FlowSchema matches (those the
// effective configuration sends to its catch-all backstop non-top-backstop).
type Unmatched string

const (
	// UnmatchedKubeAPIServer (the default, also for "") leaves them to kube-apiserver's own
	// suggested and mandatory schemas after the projection: service-accounts (9000),
	// global-default (9900) and catch-all (10000), exactly as without the operator. The
	// backstop FlowSchema is not projected.
	UnmatchedKubeAPIServer Unmatched = "kube-apiserver"
	// UnmatchedOperator projects the backstop FlowSchema non-top-backstop at MaxPrecedence, in
	// front of those three, so that every request is classified by the operator's
	// configuration (and those three are never reached).
	UnmatchedOperator Unmatched = "operator"
)

// ParseUnmatched reads a --native-unmatched value.
func ParseUnmatched(s string) (Unmatched, error) {
	switch u := Unmatched(s); u {
	case UnmatchedKubeAPIServer, UnmatchedOperator:
		return u, nil
	}
	return "", fmt.Errorf("%q is not one of %q, %q", s, UnmatchedKubeAPIServer, UnmatchedOperator)
}

// dropUnusedBackstopLevels removes from the plan the backstop levels (the implicit
// workload-low) that no projected FlowSchema refers to: a level nobody is sent to would only
// take nominal seats from kube-apiserver's own levels.
func (pr *projector) dropUnusedBackstopLevels() {
	used := map[string]bool{}
	for i := range pr.plan.FlowSchemas {
		used[pr.plan.FlowSchemas[i].Spec.PriorityLevelConfiguration.Name] = true
	}
	kept := pr.plan.PriorityLevels[:0]
	for _, plc := range pr.plan.PriorityLevels {
		if used[plc.Name] || !pr.backstopLevels[plc.Name] {
			kept = append(kept, plc)
		}
	}
	pr.plan.PriorityLevels = kept
}
