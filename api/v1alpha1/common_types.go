package v1alpha1

// Condition types, reasons, labels and annotations shared by both kinds.
const (
	// ConditionReady is True when the object is valid and in effect in the filter, False when
	// the filter ignores it (the reason says why).
	ConditionReady = "Ready"

	// ReasonAccepted: the object is valid and in effect.
	ReasonAccepted = "Accepted"
	// ReasonInvalidSpec: the spec breaks a validation rule (it was stored while no webhook
	// answered); the filter ignores the object. The message names the field and the fix.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonDuplicatePriorityLevel: another, older RequestPriority has the same priorityLevel;
	// that one keeps the level and this one is ignored.
	ReasonDuplicatePriorityLevel = "DuplicatePriorityLevel"
	// ReasonRequestPriorityNotFound: the FlowSchema refers to a RequestPriority that is neither
	// an actual object nor a backstop; the FlowSchema matches nothing and its requests fall
	// through to the backstops.
	ReasonRequestPriorityNotFound = "RequestPriorityNotFound"
	// ReasonRequestPriorityNotInEffect: the FlowSchema refers to a RequestPriority that exists
	// but is ignored (duplicate level or invalid spec); the FlowSchema matches nothing.
	ReasonRequestPriorityNotInEffect = "RequestPriorityNotInEffect"

	// LabelManagedBy marks the objects the operator created (the default objects).
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of LabelManagedBy on objects the operator created.
	ManagedByValue = "apf-operator"
	// AnnotationAutoUpdate: while "true" on an object the operator created, the operator
	// restores the default spec if it drifts; "false" hands the object to the user.
	AnnotationAutoUpdate = "flowcontrol.apf-operator.io/autoupdate-spec"

	// ExemptPriorityLevel is the logically highest priority level: its requests are never
	// queued and never counted against the server concurrency limit.
	ExemptPriorityLevel int32 = 0
)
