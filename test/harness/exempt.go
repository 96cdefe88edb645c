package harness

import flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"

// ExemptRecordOnly returns, of annotations, only the record of exempt rights
// (flowv1.AnnotationExemptAuthorized), or nil: for tests that create an administrator's own
// copy of a default object (no label, no autoupdate annotation), which keeps the record that
// only a user who may configure the exempt level writes (the admin does).
func ExemptRecordOnly(annotations map[string]string) map[string]string {
	v, ok := annotations[flowv1.AnnotationExemptAuthorized]
	if !ok {
		return nil
	}
	return map[string]string{flowv1.AnnotationExemptAuthorized: v}
}
