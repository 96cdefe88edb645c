package native

import (
	"sort"
	"time"
)

// The budget's order decides which levels the share and borrowing budget admits when not all
// fit, and is stable: a decision, once made, is undone only by a change of the budget itself
// (the kept levels, the damped server limit, --native-max-seat-loss-percent), never by a newer
// object.
//
//  1. Levels already projected (an owned native level of that name exists) come first, so a
//     new RequestPriority never evicts one that kube-apiserver enforces.
//  2. Then creationTimestamp (older first), then name: two webhook replicas or concurrent
//     creates that both passed admission end with the same outcome whichever wrote first, and
//     the later object is the one reported OverBudget. priorityLevel plays no part: it says
//     which requests a level serves first, not which configuration came first.
//
// When the budget shrinks, levels are refused from the end of this order: the newest projected
// level first.

// admitInBudgetOrder runs the budget over levels in the budget's order and marks the levels it
// refuses; levels keeps its (priority) order.
func (pr *projector) admitInBudgetOrder(levels []*preparedLevel) {
	order := append([]*preparedLevel(nil), levels...)
	sort.SliceStable(order, func(i, j int) bool { return pr.budgetLess(order[i], order[j]) })
	for _, l := range order {
		admit := pr.admit
		if l.p.SharesFrom != "" && !l.p.Backstop {
			admit = pr.carve // checked against its donor, not charged to the share budget
		}
		res, fits := admit(l.applied)
		if !fits {
			l.refused = &res
			continue
		}
		l.borrowing = pr.admittedBorrowing(l.applied)
	}
}

// budgetLess is the budget's order: projected first, then older, then by name.
func (pr *projector) budgetLess(a, b *preparedLevel) bool {
	if pa, pb := pr.alreadyProjected(a), pr.alreadyProjected(b); pa != pb {
		return pa
	}
	if ta, tb := pr.createdAt(a), pr.createdAt(b); !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.p.Name < b.p.Name
}

// alreadyProjected reports whether the operator's native level for l exists.
func (pr *projector) alreadyProjected(l *preparedLevel) bool {
	plc := pr.plcs[l.name]
	return plc != nil && Owned(plc)
}

func (pr *projector) createdAt(l *preparedLevel) time.Time {
	if l.p.Backstop {
		return time.Time{}
	}
	return pr.created[l.p.Name]
}
