package defaults

import "github.com/apf-operator/apf-operator/api/v1alpha1"

// recordExemptRights annotates a default FlowSchema that refers to system-top with
// v1alpha1.AnnotationExemptAuthorized: the operator, which creates it, has the exempt verb,
// and the projector sends a FlowSchema to the exempt level only with that record.
func recordExemptRights(fs *v1alpha1.FlowSchema) {
	if fs.Spec.RequestPriority.Name == v1alpha1.SystemTopName {
		fs.Annotations[v1alpha1.AnnotationExemptAuthorized] = "true"
	}
}
