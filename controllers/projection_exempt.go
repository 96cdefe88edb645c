package controllers

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
)

// sameExemptRecord reports whether two versions of an object of ours carry the same record of
// exempt rights (flowv1.AnnotationExemptAuthorized), which the projection reads: a metadata
// write keeps the generation, yet setting or removing it moves a FlowSchema onto or off the
// exempt level. Always true of a RequestPriority.
func sameExemptRecord(old, cur client.Object) bool {
	o, ok1 := old.(*flowv1.FlowSchema)
	c, ok2 := cur.(*flowv1.FlowSchema)
	if !ok1 || !ok2 {
		return true
	}
	return flowv1.ExemptAuthorized(o) == flowv1.ExemptAuthorized(c)
}
