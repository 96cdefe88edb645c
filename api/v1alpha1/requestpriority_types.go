package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RequestPrioritySpec is a priority level and, for a non-exempt level, how its share of the
// server's concurrency is assured and how its requests queue.
//
// Every rule names the field it is about (fieldPath), as the offline validator does; at the
// exempt level 0 only the exempt-level rules apply.
//
// +kubebuilder:validation:XValidation:rule="self.priorityLevel != 0 || !has(self.assuredConcurrencyShares)",message="priorityLevel 0 is the exempt level and takes no queuing or borrowing fields: remove assuredConcurrencyShares, or use a priorityLevel above 0",fieldPath=".assuredConcurrencyShares",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel != 0 || !has(self.queuesPerWidth)",message="priorityLevel 0 is the exempt level and takes no queuing or borrowing fields: remove queuesPerWidth, or use a priorityLevel above 0",fieldPath=".queuesPerWidth",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel != 0 || !has(self.handSize)",message="priorityLevel 0 is the exempt level and takes no queuing or borrowing fields: remove handSize, or use a priorityLevel above 0",fieldPath=".handSize",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel != 0 || !has(self.queueLengthLimit)",message="priorityLevel 0 is the exempt level and takes no queuing or borrowing fields: remove queueLengthLimit, or use a priorityLevel above 0",fieldPath=".queueLengthLimit",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel != 0 || !has(self.lendablePercent)",message="priorityLevel 0 is the exempt level and takes no queuing or borrowing fields: remove lendablePercent, or use a priorityLevel above 0",fieldPath=".lendablePercent",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel != 0 || !has(self.borrowingLimitPercent)",message="priorityLevel 0 is the exempt level and takes no queuing or borrowing fields: remove borrowingLimitPercent, or use a priorityLevel above 0",fieldPath=".borrowingLimitPercent",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel == 0 || has(self.nativeLevel) || has(self.assuredConcurrencyShares)",message="required when priorityLevel > 0 and no nativeLevel is named: set it (for example 10), or bind the level with nativeLevel",fieldPath=".assuredConcurrencyShares",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel == 0 || has(self.nativeLevel) || has(self.queuesPerWidth)",message="required when priorityLevel > 0 and no nativeLevel is named: set it (for example 64, with a handSize), or bind the level with nativeLevel",fieldPath=".queuesPerWidth",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel == 0 || has(self.nativeLevel) || has(self.queueLengthLimit)",message="required when priorityLevel > 0 and no nativeLevel is named: set it (for example 50), or bind the level with nativeLevel",fieldPath=".queueLengthLimit",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel == 0 || !has(self.queuesPerWidth) || self.queuesPerWidth <= 1 || has(self.handSize)",message="required when queuesPerWidth > 1: set it (for example 6), or set queuesPerWidth to 1",fieldPath=".handSize",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel == 0 || !has(self.handSize) || (has(self.queuesPerWidth) && self.queuesPerWidth > 1)",message="allowed only when queuesPerWidth > 1 (one queue has no hand to deal): remove handSize or raise queuesPerWidth",fieldPath=".handSize",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel == 0 || !has(self.handSize) || !has(self.queuesPerWidth) || self.handSize <= self.queuesPerWidth",message="must not exceed queuesPerWidth: lower handSize or raise queuesPerWidth",fieldPath=".handSize",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel == 0 || !has(self.queuesPerWidth) || !has(self.queueLengthLimit) || self.queuesPerWidth * self.queueLengthLimit <= 32768",message="queuesPerWidth × queueLengthLimit must be at most 32768 requests waiting per width: a level that holds more never sheds load; lower queueLengthLimit or queuesPerWidth (kube-apiserver's suggested levels use 64-128 queues of 50)",fieldPath=".queueLengthLimit",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel != 0 || !has(self.autopilot)",message="priorityLevel 0 is the exempt level and takes no queuing or borrowing fields: remove autopilot, or use a priorityLevel above 0",fieldPath=".autopilot",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel == 0 || !has(self.autopilot) || !has(self.assuredConcurrencyShares) || self.assuredConcurrencyShares != 0",message="must be above 0 with autopilot (it moves shares between levels that have some): set it within [autopilot.minShares, autopilot.maxShares], or remove autopilot",fieldPath=".assuredConcurrencyShares",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel == 0 || !has(self.autopilot) || !has(self.assuredConcurrencyShares) || self.assuredConcurrencyShares <= 0 || self.assuredConcurrencyShares > 100000 || self.autopilot.minShares > self.autopilot.maxShares || self.autopilot.minShares <= self.assuredConcurrencyShares",message="must be at most assuredConcurrencyShares, the configured shares the autopilot starts from and restores: lower minShares, or raise assuredConcurrencyShares",fieldPath=".autopilot.minShares",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel == 0 || !has(self.autopilot) || !has(self.assuredConcurrencyShares) || self.assuredConcurrencyShares <= 0 || self.assuredConcurrencyShares > 100000 || self.autopilot.minShares > self.autopilot.maxShares || self.autopilot.maxShares >= self.assuredConcurrencyShares",message="must be at least assuredConcurrencyShares, the configured shares the autopilot starts from and restores: raise maxShares, or lower assuredConcurrencyShares",fieldPath=".autopilot.maxShares",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel != 0 || !has(self.nativeLevel)",message="priorityLevel 0 is already bound to kube-apiserver's exempt level: remove nativeLevel, or use a priorityLevel above 0",fieldPath=".nativeLevel",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.priorityLevel != 0 || !has(self.sharesFrom)",message="priorityLevel 0 is the exempt level and takes no shares: remove sharesFrom, or use a priorityLevel above 0",fieldPath=".sharesFrom",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.nativeLevel) || !has(self.sharesFrom)",message="a bound level adds no shares, so it takes none from a donor: remove sharesFrom, or remove nativeLevel to define a level of its own",fieldPath=".sharesFrom",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.nativeLevel) || !has(self.autopilot)",message="the autopilot never moves a bound level's shares (they belong to the native level): remove autopilot, or remove nativeLevel",fieldPath=".autopilot",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.sharesFrom) || !has(self.autopilot)",message="carved shares are fixed by the donor's agreement: remove autopilot, or remove sharesFrom",fieldPath=".autopilot",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="!has(self.sharesFrom) || !has(self.assuredConcurrencyShares) || self.assuredConcurrencyShares > 0",message="must be above 0 with sharesFrom (the shares taken from the donor): set it, or remove sharesFrom",fieldPath=".assuredConcurrencyShares",reason="FieldValueInvalid"
// +kubebuilder:validation:XValidation:rule="has(self.nativeLevel) == has(oldSelf.nativeLevel)",message="nativeLevel can be neither added nor removed: delete the RequestPriority and create it again",fieldPath=".nativeLevel",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="has(self.sharesFrom) == has(oldSelf.sharesFrom)",message="sharesFrom can be neither added nor removed: delete the RequestPriority and create it again",fieldPath=".sharesFrom",reason="FieldValueForbidden"
type RequestPrioritySpec struct {
	// priorityLevel is the logical priority of this RequestPriority's requests: 0 is the exempt,
	// logically highest level (never queued, never limited); a numerically higher level is a
	// logically lower priority. Unique cluster-wide and immutable (delete and re-create the
	// object to change it). Range 0 to 1,000,000,000.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000000
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="priorityLevel is immutable: delete the RequestPriority and create it again with the new level"
	PriorityLevel int32 `json:"priorityLevel"`

	// assuredConcurrencyShares is this level's weight in the division of the server concurrency
	// limit (SCL): its assured concurrency value is ceil(SCL * shares / (100 + sum of all
	// levels' shares)), in width units. 0 assures nothing; the level then runs only on
	// concurrency other levels leave unused. Required when priorityLevel > 0, forbidden at 0.
	// Range 0 to 100,000.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	AssuredConcurrencyShares *int32 `json:"assuredConcurrencyShares,omitempty"`

	// queuesPerWidth is the number of queues for each request width (1 for read-only, 2 for
	// mutating requests) at this level in each API server. 1 means a single FIFO per width and
	// no flow distinction. Required when priorityLevel > 0, forbidden at 0. Range 1 to 4,096.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	QueuesPerWidth *int32 `json:"queuesPerWidth,omitempty"`

	// handSize is how many queues shuffle sharding deals to each flow; a request joins the
	// shortest queue of its flow's hand. Required when queuesPerWidth > 1 and forbidden
	// otherwise; 1 <= handSize <= queuesPerWidth, and the falling factorial
	// ff(queuesPerWidth, handSize) must stay below 2^60 (checked at admission).
	// Range 1 to 64.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	HandSize *int32 `json:"handSize,omitempty"`

	// queueLengthLimit is the most requests that may wait in one queue; a request arriving at
	// a full queue is rejected with HTTP 429. Required when priorityLevel > 0, forbidden at 0.
	// Range 1 to 100,000, and queuesPerWidth × queueLengthLimit at most 32,768 (the requests
	// that may wait per width, five times kube-apiserver's largest suggested level).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	QueueLengthLimit *int32 `json:"queueLengthLimit,omitempty"`

	// lendablePercent is the part of this level's nominal concurrency that other levels may
	// borrow while this level does not use it, as kube-apiserver's
	// PriorityLevelConfiguration.spec.limited.lendablePercent; projected onto it. Absent: the
	// in-process filter lends every idle seat (the proposal's dispatching); projected as 0.
	// Allowed only when priorityLevel > 0. Range 0 to 100.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	LendablePercent *int32 `json:"lendablePercent,omitempty"`

	// borrowingLimitPercent caps how much concurrency this level may borrow from others, as a
	// percentage of its own nominal concurrency, as kube-apiserver's
	// PriorityLevelConfiguration.spec.limited.borrowingLimitPercent; projected onto it. Absent:
	// no limit in the in-process filter; the native projection gives 50, or less where the
	// native borrowing budget requires (docs/enforcement.md, "Borrowing"). Allowed only when
	// priorityLevel > 0. At least 0; values above 100 are allowed (up to 1,000,000).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	BorrowingLimitPercent *int32 `json:"borrowingLimitPercent,omitempty"`

	// nativeLevel binds this RequestPriority to an existing flowcontrol.apiserver.k8s.io/v1
	// PriorityLevelConfiguration of that name (kube-apiserver's mandatory or suggested level, a
	// provider's, an administrator's) instead of defining a level of its own. With native
	// enforcement nothing is written for it and no shares are charged to the budget:
	// FlowSchemas that refer to this RequestPriority project onto that level, and status shows
	// the level's real seats. The queuing fields become optional; when given they are used
	// only by the in-process filter (docs/enforcement.md). Immutable. Forbidden at
	// priorityLevel 0, which is bound to "exempt" already.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="nativeLevel is immutable: delete the RequestPriority and create it again"
	NativeLevel string `json:"nativeLevel,omitempty"`

	// sharesFrom names an existing native PriorityLevelConfiguration (the donor) that gives this
	// level its assuredConcurrencyShares, zero-sum: with native enforcement the operator takes
	// the donor over through kube-apiserver's apf.kubernetes.io/autoupdate-spec: "false",
	// lowers its nominalConcurrencyShares by the same amount and restores both when this
	// object is deleted or the operator is uninstalled. The sum of all levels' shares is
	// unchanged, so only the donor's traffic sees the difference, and the budget is not
	// charged. Immutable. Forbidden with nativeLevel and at priorityLevel 0.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="sharesFrom is immutable: delete the RequestPriority and create it again"
	SharesFrom string `json:"sharesFrom,omitempty"`

	// autopilot lets the operator's leader move this level's nominal shares, within the bounds
	// given here, toward what kube-apiserver measured the level to need (docs/autopilot.md).
	// assuredConcurrencyShares stays the configured value and the one restored when autopilot
	// is removed; only the native object holds the applied value. Absent: the configured
	// shares are applied as they are. Allowed only when priorityLevel > 0.
	// +optional
	Autopilot *RequestPriorityAutopilot `json:"autopilot,omitempty"`
}

// RequestPriorityStatus is what the operator observed about a RequestPriority.
type RequestPriorityStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are the latest observations; type Ready tells whether the filter uses this
	// object, with a reason such as Accepted or DuplicatePriorityLevel; Stalled and
	// Reconciling summarise Ready and Projected for kstatus (Flux).
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// flowSchemas is how many FlowSchema objects refer to this RequestPriority.
	// +optional
	FlowSchemas int32 `json:"flowSchemas,omitempty"`

	// assuredConcurrencyFraction is shares / (100 + sum of the shares of all effective levels),
	// the part of the server concurrency limit assured to this level, as a decimal string
	// (for example "0.0714"). Empty for the exempt level.
	// +optional
	AssuredConcurrencyFraction string `json:"assuredConcurrencyFraction,omitempty"`

	// nativeName is the name of the flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration
	// this object is projected onto (condition Projected tells whether it is); "exempt" for the
	// exempt level, which is kube-apiserver's own mandatory exempt level. Empty when the
	// operator does not project (enforcement none) or the object is not projected.
	// +optional
	NativeName string `json:"nativeName,omitempty"`

	// nativeNominalSeats is the nominal number of execution seats kube-apiserver gives the
	// native level this object is projected onto (its apiserver_flowcontrol_nominal_limit_seats
	// metric, read by the operator every 30 seconds; 0 for the exempt level): the real share of
	// the server, counting kube-apiserver's own levels. Unset when the object is not projected
	// or the operator cannot read kube-apiserver's /metrics.
	// +optional
	NativeNominalSeats *int32 `json:"nativeNominalSeats,omitempty"`

	// observed summarises the requests kube-apiserver rejected at the native level this object
	// is projected onto (every FlowSchema's), enforcement native only; unset until a rejection
	// was seen, or when the operator cannot read kube-apiserver's /metrics.
	// +optional
	Observed *ObservedTraffic `json:"observed,omitempty"`

	// autopilot is what the autopilot configured, applied and recommended for this level, and
	// why; set only while spec.autopilot is.
	// +optional
	Autopilot *AutopilotStatus `json:"autopilot,omitempty"`
}

// RequestPriority is a priority level of API Priority and Fairness: requests that FlowSchemas
// assign to it share its assured concurrency and its queues.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=rp,categories=apf
// +kubebuilder:printcolumn:name="Level",type=integer,JSONPath=`.spec.priorityLevel`
// +kubebuilder:printcolumn:name="Shares",type=integer,JSONPath=`.spec.assuredConcurrencyShares`
// +kubebuilder:printcolumn:name="Assured",type=string,JSONPath=`.status.assuredConcurrencyFraction`
// +kubebuilder:printcolumn:name="Applied",type=integer,priority=1,JSONPath=`.status.autopilot.appliedShares`
// +kubebuilder:printcolumn:name="Seats",type=integer,JSONPath=`.status.nativeNominalSeats`
// +kubebuilder:printcolumn:name="Queues",type=integer,JSONPath=`.spec.queuesPerWidth`
// +kubebuilder:printcolumn:name="Hand",type=integer,JSONPath=`.spec.handSize`
// +kubebuilder:printcolumn:name="QueueLimit",type=integer,JSONPath=`.spec.queueLengthLimit`
// +kubebuilder:printcolumn:name="Schemas",type=integer,JSONPath=`.status.flowSchemas`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Projected",type=string,JSONPath=`.status.conditions[?(@.type=="Projected")].status`
// +kubebuilder:printcolumn:name="Native",type=string,priority=1,JSONPath=`.status.nativeName`
// +kubebuilder:printcolumn:name="Rejected5m",type=integer,priority=1,JSONPath=`.status.observed.rejectedLast5m`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RequestPriority struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the priority level and its queuing parameters.
	// +required
	Spec RequestPrioritySpec `json:"spec"`

	// status is what the operator observed.
	// +optional
	Status RequestPriorityStatus `json:"status,omitempty"`
}

// RequestPriorityList is a list of RequestPriority objects.
//
// +kubebuilder:object:root=true
type RequestPriorityList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the RequestPriority objects.
	Items []RequestPriority `json:"items"`
}
