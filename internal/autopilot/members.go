package autopilot

import (
	"fmt"

	"github.com/apf-operator/apf-operator/internal/apfmetrics"
)

// Measurable splits the pool's levels into those kube-apiserver's read knows (a nominal seats
// series) and those it does not, each with why: a member that is not projected (its
// RequestPriority not in effect, its native level not written, or refused) has no series, and
// would otherwise leave every window incomplete and stop the whole pool. The loop runs on the
// rest; a member left out keeps the shares it holds, so the pool's sum still holds. With no
// read (nil), every level is kept: the window is incomplete anyway.
func Measurable(levels []Level, cur *apfmetrics.Snapshot) (in []Level, out map[string]string) {
	if cur == nil {
		return levels, nil
	}
	for _, l := range levels {
		if _, ok := cur.Levels[l.Name]; ok {
			in = append(in, l)
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[l.Name] = fmt.Sprintf("kube-apiserver has no priority level %s (no %s series): the RequestPriority is not projected; "+
			"left out of the pool, its %d shares held, until it is", l.Name, apfmetrics.NominalSeatsMetric, l.Shares)
	}
	return in, out
}
