package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// flowSchemaStatus returns the status fs should have, given its effective status; fs is not
// modified.
func flowSchemaStatus(fs *flowv1.FlowSchema, st effective.Status, now metav1.Time) flowv1.FlowSchemaStatus {
	out := fs.Status.DeepCopy()
	out.ObservedGeneration = fs.Generation
	setReady(&out.Conditions, st, fs.Generation, now)
	return *out
}
