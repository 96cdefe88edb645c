package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/nativeview/bootstrapset"
)

// Donor is what the cross-object check of spec.sharesFrom knows of the native level it names.
type Donor struct {
	// Name is the PriorityLevelConfiguration's name; Exists is false when there is none.
	Name   string
	Exists bool
	// Owned is true for a level the operator itself projected; Exempt for an exempt level.
	Owned  bool
	Exempt bool
	// Shares are the donor's nominalConcurrencyShares before any carving (the recorded
	// original on a donor already taken over).
	Shares int32
}

// mandatory reports whether name is one of kube-apiserver's mandatory levels (exempt,
// catch-all), whose spec its config producer always restores.
func mandatory(name string) bool {
	for _, plc := range bootstrapset.MandatoryPriorityLevels() {
		if plc.Name == name {
			return true
		}
	}
	return false
}

// CarvedShares is what a RequestPriority takes from its donor: its assuredConcurrencyShares
// when it has spec.sharesFrom above level 0, else nothing.
func CarvedShares(rp *v1alpha1.RequestPriority) int64 {
	if rp == nil || rp.Spec.SharesFrom == "" || rp.Spec.PriorityLevel == v1alpha1.ExemptPriorityLevel ||
		rp.Spec.AssuredConcurrencyShares == nil {
		return 0
	}
	return int64(max(*rp.Spec.AssuredConcurrencyShares, 0))
}

// SharesFrom is the cross-object rule of spec.sharesFrom: the donor exists, is not the
// operator's own level, nor one of kube-apiserver's mandatory levels, nor exempt, and keeps at least v1alpha1.MinDonorShares after giving
// shares on top of carved, what other RequestPriorities already take from it. The webhook,
// offline `validate --target native` and the projector's status call it.
func SharesFrom(shares int64, donor Donor, carved int64) field.ErrorList {
	path := field.NewPath("spec", "sharesFrom")
	switch {
	case !donor.Exists:
		return field.ErrorList{field.Invalid(path, donor.Name, "no PriorityLevelConfiguration of that name exists "+
			"(kubectl get prioritylevelconfigurations lists them): name an existing level, such as "+
			"kube-apiserver's workload-low")}
	case donor.Owned:
		return field.ErrorList{field.Invalid(path, donor.Name, "the PriorityLevelConfiguration is the operator's own "+
			"projection of a RequestPriority: raise that RequestPriority's shares instead, or carve from a level "+
			"the operator does not own (kube-apiserver's workload-low, for instance)")}
	case donor.Exempt:
		return field.ErrorList{field.Invalid(path, donor.Name, "an exempt level has no shares to give: name a "+
			"Limited level (kube-apiserver's workload-low, for instance)")}
	case mandatory(donor.Name):
		return field.ErrorList{field.Invalid(path, donor.Name, "kube-apiserver's mandatory levels are reset to their "+
			"fixed spec whatever their annotations say, so their shares cannot be lowered: name a suggested level "+
			"(kube-apiserver's workload-low, for instance) or one of your own")}
	}
	if left := int64(donor.Shares) - carved - shares; left < v1alpha1.MinDonorShares {
		return field.ErrorList{field.Invalid(path, donor.Name, fmt.Sprintf("the donor has %d nominalConcurrencyShares "+
			"and other RequestPriorities already take %d, so giving %d would leave it %d, below %d: lower "+
			"assuredConcurrencyShares to at most %d, or carve from another level", donor.Shares, carved, shares, left,
			v1alpha1.MinDonorShares, max(int64(donor.Shares)-carved-v1alpha1.MinDonorShares, 0)))}
	}
	return nil
}
