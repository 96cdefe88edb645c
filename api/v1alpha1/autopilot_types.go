package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RequestPriorityAutopilot bounds what the autopilot may do to one level's nominal shares.
// The autopilot only moves shares between the levels that have it, so their sum, and with it
// every other level's nominal seats, stays what Git says.
// +kubebuilder:validation:XValidation:rule="self.minShares <= self.maxShares",message="autopilot.minShares must be at most autopilot.maxShares"
type RequestPriorityAutopilot struct {
	// minShares is the fewest nominal shares the autopilot may apply. Range 1 to 100,000.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	MinShares int32 `json:"minShares"`

	// maxShares is the most nominal shares the autopilot may apply. Range 1 to 100,000.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	MaxShares int32 `json:"maxShares"`

	// maxStepPercent is the most one step may change the applied shares, in percent of the
	// shares applied before it (a step always may move one share). Range 1 to 100; absent: 25.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxStepPercent *int32 `json:"maxStepPercent,omitempty"`
}

// Autopilot states (AutopilotStatus.State).
const (
	// AutopilotHolding: the applied shares fit the measured demand; nothing to change.
	AutopilotHolding = "Holding"
	// AutopilotConfirming: a change is recommended and waits for the next windows to agree.
	AutopilotConfirming = "Confirming"
	// AutopilotApplied: the last step changed the applied shares.
	AutopilotApplied = "Applied"
	// AutopilotWaiting: the metrics are incomplete (first window, leader change, missing or
	// reset series): nothing is changed.
	AutopilotWaiting = "Waiting"
	// AutopilotFrozen: a rejection spike followed a step; the last good shares were restored
	// and nothing changes until frozenUntil.
	AutopilotFrozen = "Frozen"
)

// AutopilotStatus is the autopilot's record for one level. The leader writes it; a new leader
// reads the applied and last good shares back from it.
type AutopilotStatus struct {
	// state is one of Holding, Confirming, Applied, Waiting, Frozen.
	// +optional
	State string `json:"state,omitempty"`

	// configuredShares is spec.assuredConcurrencyShares when the applied shares were computed.
	// +optional
	ConfiguredShares int32 `json:"configuredShares,omitempty"`

	// appliedShares are the nominal shares in the native object.
	// +optional
	AppliedShares *int32 `json:"appliedShares,omitempty"`

	// recommendedShares is what the last complete window recommended.
	// +optional
	RecommendedShares *int32 `json:"recommendedShares,omitempty"`

	// lastGoodShares are the applied shares before the last step, restored on a rejection
	// spike after it.
	// +optional
	LastGoodShares *int32 `json:"lastGoodShares,omitempty"`

	// pool identifies the configured shares of every level with autopilot when appliedShares
	// were computed; when Git changes any of them the applied shares no longer count and the
	// configured ones are applied again.
	// +optional
	Pool string `json:"pool,omitempty"`

	// message says why, with the demand figures behind it.
	// +optional
	Message string `json:"message,omitempty"`

	// lastChangeTime is when appliedShares last changed.
	// +optional
	LastChangeTime *metav1.Time `json:"lastChangeTime,omitempty"`

	// frozenUntil is when a freeze after a rejection spike ends.
	// +optional
	FrozenUntil *metav1.Time `json:"frozenUntil,omitempty"`
}
