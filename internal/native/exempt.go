package native

import (
	"fmt"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// ExemptRecord reports whether the FlowSchema named flowSchema carries a trustworthy record
// that its author may configure the exempt level (flowv1.AnnotationExemptAuthorized, which
// kube-apiserver's ValidatingAdmissionPolicy lets only such authors write).
type ExemptRecord func(flowSchema string) bool

// ExemptRecordOf returns the ExemptRecord of the FlowSchemas fss (flowv1.ExemptAuthorized).
func ExemptRecordOf(fss []flowv1.FlowSchema) ExemptRecord {
	authorized := map[string]bool{}
	for i := range fss {
		if flowv1.ExemptAuthorized(&fss[i]) {
			authorized[fss[i].Name] = true
		}
	}
	return func(name string) bool { return authorized[name] }
}

// exemptRefused reports why s, whose level projects onto level (a native level name), may not
// be projected: it would send its requests to kube-apiserver's exempt level while no record
// says its author may configure that level. The check is made at every projection, so it
// holds for objects stored while no webhook ran and for a reference that came to resolve to
// level 0 after admission (a level-0 RequestPriority created, or re-created, under its name).
// The backstops are the operator's own and pass; so does every schema when record is nil
// (offline tools, whose manifests have no authors).
func exemptRefused(s *effective.Schema, level string, record ExemptRecord) (Result, bool) {
	if level != ExemptLevelName || s.Backstop || record == nil || record(s.Name) {
		return Result{}, false
	}
	return Result{Reason: flowv1.ReasonExemptNotAuthorized, Message: fmt.Sprintf(
		"not projected, so its requests are not exempt: its RequestPriority %q has the exempt level 0 and nothing "+
			"records that the FlowSchema's author may configure that level (annotation %s: \"true\", which "+
			"kube-apiserver's ValidatingAdmissionPolicy %s lets only users with the verb %s on "+
			"requestpriorities.flowcontrol.apf-operator.io write); have such a user set the annotation, or refer "+
			"to a RequestPriority above level 0", s.Priority.Name, flowv1.AnnotationExemptAuthorized,
		flowv1.ExemptPolicyName, flowv1.ExemptVerb)}, true
}
