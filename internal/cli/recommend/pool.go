package recommend

import (
	"fmt"
	"math"
	"sort"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apfmetrics"
	"github.com/apf-operator/apf-operator/internal/autopilot"
	"github.com/apf-operator/apf-operator/internal/manifest"
	"github.com/apf-operator/apf-operator/internal/native"
)

// Step bounds of a level whose RequestPriority has no spec.autopilot: the advice is for Git,
// not for the loop, so one recommendation may move it as far as its demand asks
// (math.MaxInt32 is the recommender's "no step limit").
const (
	unboundedStepPercent int32 = math.MaxInt32
	// apiDefaultStepPercent is spec.autopilot.maxStepPercent when absent (the API's default).
	apiDefaultStepPercent int32 = 25
)

// skip is a RequestPriority left out of the pool, and why.
type skip struct {
	Object, Reason string
}

// location is where a RequestPriority is written in the manifests given with -f.
type location struct {
	File string
	Line int
}

func (l location) String() string {
	if l.Line == 0 {
		return l.File
	}
	return fmt.Sprintf("%s:%d", l.File, l.Line)
}

// bounds are the level's limits: spec.autopilot's when set, else at least one share and no
// other limit.
func bounds(spec *flowv1.RequestPrioritySpec) autopilot.Bounds {
	a := spec.Autopilot
	if a == nil {
		return autopilot.Bounds{MinShares: 1, MaxStepPercent: unboundedStepPercent}
	}
	step := apiDefaultStepPercent
	if a.MaxStepPercent != nil {
		step = *a.MaxStepPercent
	}
	return autopilot.Bounds{MinShares: a.MinShares, MaxShares: a.MaxShares, MaxStepPercent: step}
}

// specSkip says why a RequestPriority cannot be in the pool whatever the cluster says, "" when
// it can.
func specSkip(rp *flowv1.RequestPriority) string {
	switch {
	case rp.Spec.PriorityLevel == 0:
		return "priorityLevel 0: projected onto kube-apiserver's exempt level, which has no shares to move"
	case rp.Spec.AssuredConcurrencyShares == nil || *rp.Spec.AssuredConcurrencyShares == 0:
		return "assuredConcurrencyShares 0: the level is assured nothing, so it is not in the pool"
	}
	if errs := native.LevelErrors(&rp.Spec); len(errs) > 0 {
		return "not projected: " + errs.ToAggregate().Error()
	}
	return ""
}

// levelsFromManifests maps the RequestPriorities of Git to the pool's levels, each at the native
// name and shares the projection gives it.
func levelsFromManifests(rps []manifest.LocatedRequestPriority) ([]autopilot.Level, []skip) {
	var levels []autopilot.Level
	var skipped []skip
	for i := range rps {
		rp := &rps[i].RequestPriority
		if reason := specSkip(rp); reason != "" {
			skipped = append(skipped, skip{rp.Name, reason})
			continue
		}
		shares := *rp.Spec.AssuredConcurrencyShares
		levels = append(levels, autopilot.Level{
			Name: native.NativeName(rp.Name), Object: rp.Name, Shares: shares, ConfiguredShares: shares,
			LendablePercent: deref(rp.Spec.LendablePercent), BorrowingLimitPercent: rp.Spec.BorrowingLimitPercent,
			Bounds: bounds(&rp.Spec),
		})
	}
	return levels, skipped
}

// levelsFromCluster maps the cluster's RequestPriorities to the pool's levels, with the shares,
// lendable and borrowing limit their native PriorityLevelConfigurations hold now.
func levelsFromCluster(rps []flowv1.RequestPriority, plcs []flowcontrolv1.PriorityLevelConfiguration) ([]autopilot.Level, []skip) {
	byName := map[string]*flowcontrolv1.PriorityLevelConfiguration{}
	for i := range plcs {
		byName[plcs[i].Name] = &plcs[i]
	}
	var levels []autopilot.Level
	var skipped []skip
	for i := range rps {
		rp := &rps[i]
		level, reason := clusterLevel(rp, byName)
		if reason != "" {
			skipped = append(skipped, skip{rp.Name, reason})
			continue
		}
		levels = append(levels, level)
	}
	return levels, skipped
}

// clusterLevel is the pool level of one RequestPriority of the cluster, or why it has none.
func clusterLevel(rp *flowv1.RequestPriority, plcs map[string]*flowcontrolv1.PriorityLevelConfiguration) (autopilot.Level, string) {
	if reason := specSkip(rp); reason != "" {
		return autopilot.Level{}, reason
	}
	name := rp.Status.NativeName
	if name == "" {
		return autopilot.Level{}, "not projected: status.nativeName is empty (see its Projected condition)"
	}
	plc := plcs[name]
	switch {
	case plc == nil:
		return autopilot.Level{}, fmt.Sprintf("not projected: PriorityLevelConfiguration %s (status.nativeName) not found", name)
	case !native.Owned(plc) || plc.Annotations[flowv1.AnnotationSource] != native.Source(native.KindRequestPriority, rp.Name):
		return autopilot.Level{}, fmt.Sprintf("not projected: PriorityLevelConfiguration %s is not the operator's projection of it", name)
	case plc.Spec.Limited == nil || plc.Spec.Limited.NominalConcurrencyShares == nil:
		return autopilot.Level{}, fmt.Sprintf("not projected: PriorityLevelConfiguration %s is not a Limited level with shares", name)
	}
	lim := plc.Spec.Limited
	return autopilot.Level{
		Name: name, Object: rp.Name, Shares: *lim.NominalConcurrencyShares, ConfiguredShares: *rp.Spec.AssuredConcurrencyShares,
		LendablePercent: deref(lim.LendablePercent), BorrowingLimitPercent: lim.BorrowingLimitPercent,
		Bounds: bounds(&rp.Spec),
	}, ""
}

// withDemand keeps the levels whose demand both reads measured; the others are skipped (a
// level without series would make the whole window incomplete).
func withDemand(levels []autopilot.Level, prev, cur *apfmetrics.Snapshot) ([]autopilot.Level, []skip) {
	var kept []autopilot.Level
	var skipped []skip
	for _, l := range levels {
		if prev.Demand[l.Name] == nil || cur.Demand[l.Name] == nil {
			skipped = append(skipped, skip{l.Object, fmt.Sprintf("no %s series for level %s in the metrics read "+
				"(not projected on that kube-apiserver, or created during the window)", apfmetrics.DemandMetric, l.Name)})
			continue
		}
		kept = append(kept, l)
	}
	return kept, skipped
}

// sortSkips orders skipped objects by name.
func sortSkips(s []skip) {
	sort.Slice(s, func(i, j int) bool { return s[i].Object < s[j].Object })
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
