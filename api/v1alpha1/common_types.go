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
	// ReasonOverriddenByMastersSchema: every request the FlowSchema matches is of group
	// system:masters, which the implicit FlowSchema system-top sends to the exempt level ahead
	// of every FlowSchema, and the FlowSchema's own level is not exempt: it never takes a
	// request, so the filter ignores it.
	ReasonOverriddenByMastersSchema = "OverriddenByMastersSchema"

	// ConditionProjected is True when the object is enforced by kube-apiserver through its
	// projection onto flowcontrol.apiserver.k8s.io/v1 (status.nativeName names the native
	// object), False when it cannot be projected exactly or is not in effect (the reason and
	// message say why and name the field). Absent when enforcement is "none".
	ConditionProjected = "Projected"

	// ReasonProjected: the native object carries exactly this object's meaning.
	ReasonProjected = "Projected"
	// ReasonNotExpressible: the native API cannot express this object exactly (a name test, a
	// pattern over an unbounded domain, a distinguisher transformation, ...); the message names
	// the field. Nothing is projected, rather than a broader or narrower rule.
	ReasonNotExpressible = "NotExpressible"
	// ReasonNotInEffect: the object is not in effect (see Ready), so it is not projected.
	ReasonNotInEffect = "NotInEffect"
	// ReasonNameConflict: a native object with the projected name exists and is not the
	// operator's; the operator never touches it, so this object is not projected.
	ReasonNameConflict = "NameConflict"
	// ReasonRequestPriorityNotProjected: the FlowSchema's RequestPriority is not projected.
	ReasonRequestPriorityNotProjected = "RequestPriorityNotProjected"
	// ReasonShadowedByNative: a default FlowSchema the operator owns is deliberately not
	// projected because kube-apiserver's own FlowSchemas (named in the message) already classify
	// its requests, and projecting it would move some of them to another level
	// (internal/defaults.Withheld). Not a fault: it does not make the object Stalled.
	ReasonShadowedByNative = "ShadowedByNative"
	// ReasonPending: the native object is being written (the cluster does not hold it yet).
	ReasonPending = "Pending"
	// ReasonPrecedenceExhausted: more FlowSchemas are in effect than native matching
	// precedences are available between kube-apiserver's kept schemas and service-accounts.
	ReasonPrecedenceExhausted = "PrecedenceExhausted"
	// ReasonOverBudget: projecting this RequestPriority would take kube-apiserver's own levels
	// past the share budget (--native-max-seat-loss-percent); levels of higher priority took it.
	ReasonOverBudget = "OverBudget"

	// ConditionStalled is True, with the reason and message of the condition it reflects, while
	// the object cannot take effect without a change by the user: Ready is False, or Projected
	// is False for a reason other than Pending. Absent otherwise. It is the "abnormal-true"
	// condition of kstatus (sigs.k8s.io/cli-utils), which Flux and kpt read as Failed.
	ConditionStalled = "Stalled"
	// ConditionReconciling is True, reason Pending, while the native object is being written
	// (Projected is False with reason Pending). Absent otherwise. kstatus reads it as
	// InProgress.
	ConditionReconciling = "Reconciling"

	// LabelManagedBy marks the objects the operator created (the default objects).
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of LabelManagedBy on objects the operator created.
	ManagedByValue = "apf-operator"
	// AnnotationAutoUpdate: while "true" on an object the operator created, the operator
	// restores the default spec if it drifts; "false" hands the object to the user.
	AnnotationAutoUpdate = "flowcontrol.apf-operator.io/autoupdate-spec"
	// AnnotationSource names, on a native flowcontrol.apiserver.k8s.io/v1 object the operator
	// owns, the object it was projected from: "<Kind>/<name>" (RequestPriority/system-high,
	// FlowSchema/tenant-a; backstops name themselves the same way).
	AnnotationSource = "flowcontrol.apf-operator.io/source"

	// ExemptPriorityLevel is the logically highest priority level: its requests are never
	// queued and never counted against the server concurrency limit.
	ExemptPriorityLevel int32 = 0
)
