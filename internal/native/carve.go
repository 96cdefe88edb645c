package native

import (
	"fmt"
	"sort"
	"strconv"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
	"github.com/apf-operator/apf-operator/internal/native/budget"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
	"github.com/apf-operator/apf-operator/internal/validation"
)

// carve admits a level that takes its shares from a donor (spec.sharesFrom) instead of the
// budget, levels of higher priority first, or tells why the donor cannot give them.
func (pr *projector) carve(p *effective.Priority) (Result, bool) {
	errs := validation.SharesFrom(int64(max(p.Shares, 0)), pr.donor(p.SharesFrom), pr.carved[p.SharesFrom])
	if len(errs) > 0 {
		return Result{Reason: flowv1.ReasonDonorRefused, Errors: errs,
			Message: "not projected, so kube-apiserver does not enforce it: " + errs.ToAggregate().Error()}, false
	}
	pr.carved[p.SharesFrom] += int64(max(p.Shares, 0))
	return Result{}, true
}

// carvedNote adds to a projected level's Result where its shares come from.
func carvedNote(res Result, p *effective.Priority) Result {
	if p.SharesFrom != "" && !p.Backstop {
		res.Message += fmt.Sprintf("; its %d shares are carved from %s (spec.sharesFrom), which the operator took over "+
			"(apf.kubernetes.io/autoupdate-spec \"false\") and lowered by the shares carved from it, so no other level shrinks",
			p.Shares, p.SharesFrom)
	}
	return res
}

// donor describes the native level name for the sharesFrom check: one of the existing levels,
// or of kube-apiserver's bootstrap set when none is known (offline validation).
func (pr *projector) donor(name string) validation.Donor {
	plc := pr.plcs[name]
	if plc == nil && len(pr.plcs) == 0 {
		for _, b := range bootstrapset.PriorityLevels() {
			if b.Name == name {
				plc = &b
			}
		}
	}
	if plc == nil {
		return validation.Donor{Name: name}
	}
	return validation.Donor{Name: name, Exists: true, Owned: Owned(plc), Shares: OriginalShares(plc),
		Exempt: plc.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt || plc.Spec.Limited == nil}
}

// planDonors puts into the plan every existing donor whose object must change: lowered by
// what is carved from it (taken over first), or restored when nothing is carved any more.
func (pr *projector) planDonors() {
	for name, live := range pr.plcs {
		if Owned(live) || live.Spec.Limited == nil {
			continue
		}
		var want *flowcontrolv1.PriorityLevelConfiguration
		if carved := pr.carved[name]; carved > 0 {
			want = TakeOver(live, int32(carved))
		} else {
			want = RestoreDonor(live)
		}
		if want != nil && !equality.Semantic.DeepEqual(want, live) {
			pr.plan.Donors = append(pr.plan.Donors, *want)
		}
	}
	sort.Slice(pr.plan.Donors, func(i, j int) bool { return pr.plan.Donors[i].Name < pr.plan.Donors[j].Name })
}

// OriginalShares is a native level's nominalConcurrencyShares before the operator carved
// from it: the recorded value on a donor, the current one on any other level.
func OriginalShares(plc *flowcontrolv1.PriorityLevelConfiguration) int32 {
	if s, ok := recordedShares(plc); ok {
		return s
	}
	return budget.Shares(plc)
}

func recordedShares(plc *flowcontrolv1.PriorityLevelConfiguration) (int32, bool) {
	v, ok := plc.Annotations[flowv1.AnnotationDonorShares]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 32)
	return int32(n), err == nil && n >= 0
}

// IsDonor reports whether the operator has taken plc over to carve shares from it.
func IsDonor(plc *flowcontrolv1.PriorityLevelConfiguration) bool {
	_, ok := plc.Annotations[flowv1.AnnotationDonorShares]
	return ok
}

// TakeOver returns a copy of the donor plc lowered by carved shares: on the first takeover
// it records the original shares and autoupdate-spec annotation, then sets
// apf.kubernetes.io/autoupdate-spec "false" so that kube-apiserver's config producer keeps
// the lowered spec. The shares are always computed from the recorded original, so repeated
// takeovers do not compound.
func TakeOver(plc *flowcontrolv1.PriorityLevelConfiguration, carved int32) *flowcontrolv1.PriorityLevelConfiguration {
	out := plc.DeepCopy()
	original := OriginalShares(plc)
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	if _, ok := recordedShares(plc); !ok {
		out.Annotations[flowv1.AnnotationDonorShares] = strconv.Itoa(int(original))
		auto, had := plc.Annotations[flowcontrolv1.AutoUpdateAnnotationKey]
		if !had {
			auto = flowv1.DonorAutoupdateAbsent
		}
		out.Annotations[flowv1.AnnotationDonorAutoupdate] = auto
	}
	out.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = "false"
	lowered := original - carved
	out.Spec.Limited.NominalConcurrencyShares = &lowered
	return out
}

// RestoreDonor returns a copy of plc with the shares and autoupdate-spec annotation it had
// before the takeover and without the operator's records, or nil when plc is no donor. An
// unreadable record of the shares keeps the current shares.
func RestoreDonor(plc *flowcontrolv1.PriorityLevelConfiguration) *flowcontrolv1.PriorityLevelConfiguration {
	if !IsDonor(plc) {
		return nil
	}
	out := plc.DeepCopy()
	if shares, ok := recordedShares(plc); ok && out.Spec.Limited != nil {
		out.Spec.Limited.NominalConcurrencyShares = &shares
	}
	switch auto, ok := plc.Annotations[flowv1.AnnotationDonorAutoupdate]; {
	case !ok:
	case auto == flowv1.DonorAutoupdateAbsent:
		delete(out.Annotations, flowcontrolv1.AutoUpdateAnnotationKey)
	default:
		out.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = auto
	}
	delete(out.Annotations, flowv1.AnnotationDonorShares)
	delete(out.Annotations, flowv1.AnnotationDonorAutoupdate)
	return out
}
