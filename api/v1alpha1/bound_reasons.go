package v1alpha1

// Reasons of condition Projected for bound RequestPriorities (spec.nativeLevel).
const (
	// ReasonBound: the RequestPriority is bound to the existing native level status.nativeName;
	// nothing is written for it, and FlowSchemas that refer to it are projected onto that level.
	// The message names the spec fields kube-apiserver reads differently from the in-process
	// engine.
	ReasonBound = "Bound"
	// ReasonNativeLevelNotFound: the native level named by spec.nativeLevel does not exist; no
	// other level stands in for it, so the RequestPriority and its FlowSchemas are not projected.
	ReasonNativeLevelNotFound = "NativeLevelNotFound"
	// ReasonNativeLevelOwned: spec.nativeLevel names a level the operator itself writes (label
	// app.kubernetes.io/managed-by=apf-operator); a binding names a level of the cluster's own.
	ReasonNativeLevelOwned = "NativeLevelOwnedByOperator"
	// ReasonExemptBindingNotAllowed: spec.nativeLevel is "exempt" and the projection has no
	// record that the RequestPriority's author may configure the exempt level.
	ReasonExemptBindingNotAllowed = "ExemptBindingNotAllowed"
)
