package v1alpha1

// Exempt rights (docs/enforcement.md "Exempt rights"): who may send requests to the exempt
// level is decided where kube-apiserver itself enforces it, by the authorizer.
const (
	// ExemptVerb is the custom RBAC verb, on requestpriorities.flowcontrol.apf-operator.io,
	// that lets a user configure the exempt level 0. kube-apiserver's ValidatingAdmissionPolicy
	// ExemptPolicyName asks the authorizer for it (system:masters always has it).
	ExemptVerb = "configure-exempt"
	// ExemptPolicyName names the ValidatingAdmissionPolicy (and its binding) that the chart and
	// config/ ship.
	ExemptPolicyName = "apf-operator-exempt-rights"
	// AnnotationExemptAuthorized, "true" on a FlowSchema, records that the last writer of the
	// FlowSchema had ExemptVerb: ExemptPolicyName refuses any create, update or delete of a
	// FlowSchema carrying it (before or after the write) by a user without the verb. The
	// projector sends a FlowSchema to kube-apiserver's exempt level only when it carries it.
	AnnotationExemptAuthorized = "flowcontrol.apf-operator.io/exempt-authorized"
	// ReasonExemptNotAuthorized (Projected=False): the FlowSchema's RequestPriority has the
	// exempt level 0 and nothing records that its author may configure it.
	ReasonExemptNotAuthorized = "ExemptNotAuthorized"
	// SystemTopName is the default level-0 RequestPriority's name: a FlowSchema that refers to
	// it always needs exempt rights, whether it exists or not.
	SystemTopName = "system-top"
)

// ExemptAuthorized reports whether fs carries AnnotationExemptAuthorized "true".
func ExemptAuthorized(fs *FlowSchema) bool {
	return fs.Annotations[AnnotationExemptAuthorized] == "true"
}
