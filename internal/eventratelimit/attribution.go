package eventratelimit

// SkipReason is why an admission request was admitted without charging any bucket: the value
// of the reason label of apf_operator_event_rate_limit_skipped_total.
type SkipReason string

// The reasons. A real kube-apiserver always names the namespace and the authenticated user of
// an event creation, so NoNamespace and NoUser come from callers other than kube-apiserver (or
// a webhook registered for something else); charging them would let any caller drain the
// buckets of the namespace or user its request body names, or share one bucket keyed "".
const (
	// SkipNotEventCreate: the review is not a CREATE of events (core/v1 or events.k8s.io/v1).
	SkipNotEventCreate SkipReason = "NotEventCreate"
	// SkipDryRun: a dry run creates no event.
	SkipDryRun SkipReason = "DryRun"
	// SkipNoNamespace: the review names no namespace.
	SkipNoNamespace SkipReason = "NoNamespace"
	// SkipNoUser: the review names no user.
	SkipNoUser SkipReason = "NoUser"
)

// SkipReasons are every SkipReason, in the order of the metric's series.
var SkipReasons = []SkipReason{SkipNotEventCreate, SkipDryRun, SkipNoNamespace, SkipNoUser}

// Unattributed returns why a cannot be charged to the buckets it names, or "" when it can: the
// webhook admits such a request without calling Admit, and counts it with Skip.
func (a *Attributes) Unattributed() SkipReason {
	switch {
	case a.Namespace == "":
		return SkipNoNamespace
	case a.User == "":
		return SkipNoUser
	}
	return ""
}

// Skip counts a request admitted without charging any bucket.
func (e *Engine) Skip(reason SkipReason) {
	if e.metrics != nil {
		e.metrics.skip(reason)
	}
}
