package v1alpha1

// Carving: a RequestPriority with spec.sharesFrom takes its shares from a native level (the
// donor). The operator records on the donor what it found there, so that restoring is exact
// and survives a restart of the operator (docs/enforcement.md, "Carving shares from a level").
const (
	// ReasonDonorRefused (condition Projected) means the level named by spec.sharesFrom
	// cannot give the shares: it is missing, the operator's own, exempt, or would keep too few.
	ReasonDonorRefused = "DonorRefused"

	// AnnotationDonorShares, on a donor PriorityLevelConfiguration, holds the
	// nominalConcurrencyShares it had before the operator first lowered them.
	AnnotationDonorShares = "flowcontrol.apf-operator.io/donor-original-shares"
	// AnnotationDonorAutoupdate, on a donor, holds the apf.kubernetes.io/autoupdate-spec value it
	// had before the takeover, or DonorAutoupdateAbsent when it had none.
	AnnotationDonorAutoupdate = "flowcontrol.apf-operator.io/donor-original-autoupdate-spec"
	// DonorAutoupdateAbsent is AnnotationDonorAutoupdate's value for a donor that had no
	// apf.kubernetes.io/autoupdate-spec annotation.
	DonorAutoupdateAbsent = "absent"
	// MinDonorShares is the fewest nominalConcurrencyShares a donor keeps: kube-apiserver gives
	// a level with 0 shares no nominal seat, which would starve the donor's traffic.
	MinDonorShares = 1
)
