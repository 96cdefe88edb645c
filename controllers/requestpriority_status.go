package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1 "github.com/apf-operator/apf-operator/api/v1alpha1"
	"github.com/apf-operator/apf-operator/internal/apf/effective"
)

// requestPriorityStatus returns the status rp should have, given its effective status; rp is
// not modified.
func requestPriorityStatus(rp *flowv1.RequestPriority, st effective.Status, now metav1.Time) flowv1.RequestPriorityStatus {
	out := rp.Status.DeepCopy()
	out.ObservedGeneration = rp.Generation
	out.FlowSchemas = st.FlowSchemas
	out.AssuredConcurrencyFraction = st.AssuredFraction
	setReady(&out.Conditions, st, rp.Generation, now)
	return *out
}
